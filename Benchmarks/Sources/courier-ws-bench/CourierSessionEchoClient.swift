import Courier
import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's session layer: `URLSessionManager.webSocketTask(with:)`, `URLSessionWebSocketTask`'s
/// shape (`send(.data)`, `receive()`, `cancel(with:reason:)`), with
/// `SessionConfiguration.webSocket.perMessageDeflate = false`. After `cancel(with: .normalClosure)`
/// it waits for the close: `receive()` throws once the socket is closed. `courier-session-loop`
/// runs the same sockets from tasks on `URLSessionManager.taskExecutor`.
final class CourierSessionEchoClient: EchoClient {
    private let manager: URLSessionManager
    private let route: OpeningRoute?
    /// `manager.taskExecutor` for the `courier-session-loop` client, else nil.
    let taskExecutor: (any TaskExecutor)?

    /// `trust`: the test CA, for the TLS cases. `route`: how openings go: RFC 8441 is turned off
    /// for the HTTP/1.1 route so that it stays a new HTTP/1.1 connection each time, left on
    /// (the default) for the HTTP/2 one; each socket's metrics must then name the route's
    /// protocol. `onLoop`: the sockets' tasks run on the session's task executor.
    init(trust: ServerTrust?, route: OpeningRoute?, onLoop: Bool) {
        var configuration = SessionConfiguration()
        configuration.webSocket.perMessageDeflate = false
        configuration.webSocket.allowsHTTP2 = route != .http1Upgrade
        if let trust { configuration.tls.additionalTrustRootsDER = [trust.rootDER] }
        manager = URLSessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        self.route = route
        taskExecutor = onLoop ? manager.taskExecutor : nil
    }

    /// A data task on the session, whose engine then holds the HTTP/2 connection the sockets'
    /// streams go on.
    func prime(_ url: URL) async throws {
        let (_, response) = try await manager.data(for: URLRequest(url: url))
        guard response.statusCode == 200 else { throw EchoError.refused(response.statusCode) }
    }

    func run(_ url: URL, _ script: EchoScript) async throws {
        let task = manager.webSocketTask(with: url)
        task.maximumMessageSize = EchoPayload.maximumMessageSize
        task.resume()
        do {
            try await script.play { index in
                try await task.send(.data(script.data(index)))
                guard case .data(let echo) = try await task.receive() else {
                    throw EchoError.unexpected("a text message for message #\(index)")
                }
                try script.check(echo, index)
            }
            if let route, task.metrics?.networkProtocolName != route.networkProtocolName {
                throw EchoError.unexpected("opened over \(task.metrics?.networkProtocolName ?? "?"), not \(route.networkProtocolName)")
            }
        } catch {
            task.cancel(with: .internalServerError, reason: nil)
            throw error
        }
        task.cancel(with: .normalClosure, reason: nil)
        do {
            let message = try await task.receive()
            throw EchoError.unexpected("a message after the close: \(message)")
        } catch CourierError.webSocketFailed(_, .closed(let code, _)) {
            guard code == 1000 else { throw EchoError.badClose("code \(code)") }
        } catch {
            throw EchoError.badClose(String(describing: error))
        }
    }

    func shutdown() async {
        await manager.invalidateSession(cancelingTasks: true)
    }
}
