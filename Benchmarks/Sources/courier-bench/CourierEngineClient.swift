import CourierEngine
import Foundation
import NIOCore
import NIOHTTP1

/// CourierEngine's `HTTPEngine`: `collect` for small GETs, `stream` for downloads,
/// `RequestBody.stream(length:)` for uploads. Default configuration except the per-host
/// connection limits, which all three clients get from `--connections`.
final class CourierEngineClient: BenchClient {
    let engine: HTTPEngine
    /// Where the workers run: `engine.taskExecutor` for the `courier-engine-loop` rows, else nil
    /// (the cooperative pool).
    let taskExecutor: (any TaskExecutor)?

    /// `tls` (for `courier-bench https`): trust its CA and choose the protocol policy.
    /// `tasksOnLoop`: the workers run on `HTTPEngine.taskExecutor`.
    init(connections: Int, tls: BenchTLS? = nil, tasksOnLoop: Bool = false) throws {
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = connections
        configuration.maximumIdleConnectionsPerHost = connections
        if let tls {
            configuration.tls.additionalTrustRootsDER = [tls.caDER]
            configuration.httpVersion = tls.allowsHTTP2 ? .automatic : .http1Only
        }
        engine = try HTTPEngine(configuration: configuration)
        taskExecutor = tasksOnLoop ? engine.taskExecutor : nil
    }

    func get(_ url: URL) async throws -> Int {
        let response = try await engine.collect(EngineRequest(url: url))
        guard response.head.status == .ok else { throw BenchError.status(Int(response.head.status.code), url) }
        return response.body.readableBytes
    }

    func download(_ url: URL, to path: String) async throws -> Int64 {
        let response = try await engine.stream(EngineRequest(url: url))
        guard response.head.status == .ok else { throw BenchError.status(Int(response.head.status.code), url) }
        return try await FileSink.write(response.body, to: path)
    }

    func upload(_ url: URL, length: Int64, chunk: ByteBuffer, file: String?) async throws -> UploadAnswer {
        let body = RequestBody.stream(length: length) { writer in
            for await part in RepeatedChunks(chunk: chunk, count: length) {
                try await writer.write(part)
            }
        }
        let request = EngineRequest(
            method: "POST",
            url: url,
            headers: ["Content-Type": "application/octet-stream"],
            body: body
        )
        let response = try await engine.collect(request)
        guard response.head.status == .ok else { throw BenchError.status(Int(response.head.status.code), url) }
        return try UploadAnswer(json: Data(response.body.readableBytesView))
    }

    func shutdown() async {
        await engine.shutdown()
    }
}
