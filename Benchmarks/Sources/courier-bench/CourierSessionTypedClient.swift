import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore

/// Courier's session layer in its typed async shape: `URLSessionManager.response(for:
/// serializer:)` with the same `HTTPResponseSerializer` validation as ``CourierSessionClient``,
/// returning an `HTTPTypesResponse` (status and fields as swift-http-types values). A built-in
/// serializer reads the engine's response head, so a valid response makes no Foundation
/// `HTTPURLResponse`: the difference from `courier-session` (AFNetworking's `data(for:)`, which
/// returns one) is what that type costs. Small GETs only: its transfers are the session's own.
final class CourierSessionTypedClient: SmallCasesOnlyClient {
    static let clientName = "courier-session-typed"
    let manager: URLSessionManager
    let serializer = HTTPResponseSerializer()

    init(connections: Int) {
        var configuration = SessionConfiguration()
        configuration.httpMaximumConnectionsPerHost = connections
        manager = URLSessionManager(configuration: configuration)
    }

    func get(_ url: URL) async throws -> Int {
        let response = try await manager.response(for: URLRequest(url: url), serializer: serializer)
        guard response.status.code == 200 else { throw BenchError.status(response.status.code, url) }
        return response.value?.count ?? 0
    }

    func shutdown() async {
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
    }
}
