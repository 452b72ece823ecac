import Courier
import CourierEngine
import Foundation

/// Courier's session layer: `URLSessionManager.webSocketTask(with:)`, `URLSessionWebSocketTask`'s
/// shape (`send(.data)`, `receive()`, `cancel(with:reason:)`), with
/// `SessionConfiguration.webSocket.perMessageDeflate = false`. After `cancel(with: .normalClosure)`
/// it waits for the close: `receive()` throws once the socket is closed.
final class CourierSessionEchoClient: EchoClient {
    private let manager: URLSessionManager

    /// `trust`: the test CA, for the TLS cases. `route`: how openings go; RFC 8441 is turned
    /// off for the HTTP/1.1 route so that it stays a new HTTP/1.1 connection each time.
    init(trust: ServerTrust?, route: OpeningRoute?) {
        var configuration = SessionConfiguration()
        configuration.webSocket.perMessageDeflate = false
        if route == .http1Upgrade { configuration.webSocket.allowsHTTP2 = false }
        if let trust { configuration.tls.additionalTrustRootsDER = [trust.rootDER] }
        manager = URLSessionManager(configuration: configuration)
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
