import Courier
import Foundation
import HTTPTypes
import NIOCore
import Synchronization

/// Courier's session layer in its swift-http-types shape: `URLSessionManager.data(for:
/// HTTPRequest)` on the same data tasks as ``CourierSessionClient``, which makes no
/// Foundation `HTTPURLResponse` (28 µs per response on Linux for nginx's header fields) and
/// runs no response serializer (the status is checked here, as for the engine). Small GETs
/// only: its transfers are the session's own.
final class CourierSessionHTTPTypesClient: SmallCasesOnlyClient {
    static let clientName = "courier-session-http-types"
    let manager: URLSessionManager

    init(connections: Int) {
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = connections
        manager = URLSessionManager(configuration: configuration)
    }

    /// The request for the last URL asked: a server-side caller already holds its
    /// `HTTPRequest` (the row measures the session, not reading a Foundation `URL` apart).
    private let lastRequest = Mutex<(url: URL, request: HTTPRequest)?>(nil)

    private func request(for url: URL) -> HTTPRequest {
        if let last = lastRequest.withLock({ $0 }), last.url == url { return last.request }
        let request = HTTPRequest(
            method: .get, scheme: url.scheme, authority: url.port.map { "\(url.host ?? ""):\($0)" } ?? url.host,
            path: url.path.isEmpty ? "/" : url.path)
        lastRequest.withLock { $0 = (url, request) }
        return request
    }

    func get(_ url: URL) async throws -> Int {
        let (data, response) = try await manager.data(for: request(for: url))
        guard response.status == .ok else { throw BenchError.status(response.status.code, url) }
        return data.count
    }

    func shutdown() async {
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
}
