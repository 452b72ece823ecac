import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// AsyncHTTPClient 1.37 through its async API, `execute(_:timeout:)`, in the same shapes as
/// the others: body collected for small GETs, iterated into a file for downloads, an async
/// sequence of generated chunks for uploads. Default configuration (no decompression) except
/// the per-host connection soft limit.
final class AsyncHTTPClientClient: BenchClient {
    let client: HTTPClient
    static let timeout: TimeAmount = .seconds(600)

    /// `tls` (for `courier-bench https`): trust its CA and choose the protocol policy.
    init(connections: Int, tls: BenchTLS? = nil) {
        var configuration = HTTPClient.Configuration()
        if let tls {
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            tlsConfiguration.trustRoots = .file(tls.caPath)
            configuration.tlsConfiguration = tlsConfiguration
            configuration.httpVersion = tls.allowsHTTP2 ? .automatic : .http1Only
        }
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: connections
        )
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    func get(_ url: URL) async throws -> Int {
        let request = HTTPClientRequest(url: url.absoluteString)
        let response = try await client.execute(request, timeout: Self.timeout)
        guard response.status == .ok else { throw BenchError.status(Int(response.status.code), url) }
        let body = try await response.body.collect(upTo: 1 << 20)
        return body.readableBytes
    }

    func download(_ url: URL, to path: String) async throws -> Int64 {
        let request = HTTPClientRequest(url: url.absoluteString)
        let response = try await client.execute(request, timeout: Self.timeout)
        guard response.status == .ok else { throw BenchError.status(Int(response.status.code), url) }
        return try await FileSink.write(response.body, to: path)
    }

    func upload(_ url: URL, length: Int64, chunk: ByteBuffer, file: String?) async throws -> UploadAnswer {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .stream(RepeatedChunks(chunk: chunk, count: length), length: .known(length))
        let response = try await client.execute(request, timeout: Self.timeout)
        guard response.status == .ok else { throw BenchError.status(Int(response.status.code), url) }
        let body = try await response.body.collect(upTo: 1 << 16)
        return try UploadAnswer(json: Data(body.readableBytesView))
    }

    func shutdown() async {
        try? await client.shutdown().get()
    }
}
