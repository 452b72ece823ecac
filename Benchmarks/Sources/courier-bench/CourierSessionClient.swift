import Courier
import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore

/// Courier's session layer (`URLSessionManager`): what an AFNetworking-style user runs. Small
/// GETs go through a data task with the HTTP response serializer (validation, no parsing), so
/// the column shows the session layer's overhead over the bare engine.
final class CourierSessionClient: BenchClient {
    let manager: URLSessionManager
    /// Where the workers run: `manager.taskExecutor` for the `courier-session-loop` rows, else
    /// nil (the cooperative pool).
    let taskExecutor: (any TaskExecutor)?

    /// `tls` (for `courier-bench https`): trust its CA and choose the protocol policy.
    /// `tasksOnLoop`: the workers run on `URLSessionManager.taskExecutor`.
    /// `monitor`: an event monitor to attach (the `courier-session-monitor` and `-events` rows).
    init(connections: Int, tls: BenchTLS? = nil, tasksOnLoop: Bool = false, monitor: (any SessionEventMonitor)? = nil) {
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = connections
        if let tls {
            configuration.tls.additionalTrustRootsDER = [tls.caDER]
            configuration.httpVersion = tls.allowsHTTP2 ? .automatic : .http1Only
        }
        manager = URLSessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        if let monitor { manager.addEventMonitor(monitor) }
        taskExecutor = tasksOnLoop ? manager.taskExecutor : nil
    }

    func get(_ url: URL) async throws -> Int {
        let (object, response) = try await manager.data(for: URLRequest(url: url))
        guard response.statusCode == 200 else { throw BenchError.status(response.statusCode, url) }
        return (object as? Data)?.count ?? 0
    }

    func download(_ url: URL, to path: String) async throws -> Int64 {
        let destination = URL(fileURLWithPath: path)
        let result: (URL?, (any Error)?) = await withCheckedContinuation { continuation in
            manager.downloadTask(
                with: URLRequest(url: url),
                destination: { _, _ in destination },
                completionHandler: { _, file, error in continuation.resume(returning: (file, error)) }
            ).resume()
        }
        if let error = result.1 { throw error }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }

    func upload(_ url: URL, length: Int64, chunk: ByteBuffer, file: String?) async throws -> UploadAnswer {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let body = RequestBody.sequence(RepeatedChunks(chunk: chunk, count: length), length: length)
        let result: (Data?, (any Error)?) = await withCheckedContinuation { continuation in
            manager.uploadTask(withStreamedRequest: request, body: body, completionHandler: { _, object, error in
                continuation.resume(returning: (object as? Data, error))
            }).resume()
        }
        if let error = result.1 { throw error }
        return try UploadAnswer(json: result.0 ?? Data())
    }

    func shutdown() async {
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
}
