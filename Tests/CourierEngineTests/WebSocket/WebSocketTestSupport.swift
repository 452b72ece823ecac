import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// Opens a WebSocket to `path` on `server` (ws:// or wss:// as the server speaks), failing
/// the test when the handshake is refused.
func openSocket(
    _ engine: HTTPEngine, _ server: TestServer, _ path: String, options: WebSocketOptions = .init(),
    headers: [(String, String)] = []
) async throws -> WebSocketConnection {
    let base = server.baseURL.absoluteString.replacingOccurrences(of: "http", with: "ws", options: .anchored)
    let url = try #require(URL(string: base + path))
    var request = EngineRequest(url: url)
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    switch try await engine.openWebSocket(request, options: options) {
    case .opened(let socket):
        return socket
    case .refused(let head, _, _):
        Issue.record("the handshake was refused: \(head.status)")
        throw WebSocketError.handshakeFailed("refused \(head.status.code)")
    }
}

/// The error `receive()` ends with (nil when it ends normally, after `limit` messages at most).
func receiveFailure(_ socket: WebSocketConnection, limit: Int = 100) async -> WebSocketError? {
    for _ in 0..<limit {
        do {
            guard try await socket.receive() != nil else { return nil }
        } catch let error as WebSocketError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }
    Issue.record("the socket kept delivering messages")
    return nil
}

/// Waits until the server recorded a close frame from the client; its code.
func closeCodeTheServerReceived(_ server: TestServer) async -> Int?? {
    _ = await eventually(within: 10) { !server.webSocketClosesReceived.isEmpty }
    return server.webSocketClosesReceived.first
}

extension WebSocketError {
    /// The close code of a protocol violation (nil for any other error).
    var violationCode: WebSocketCloseCode? {
        if case .protocolViolation(let code, _) = self { return code }
        return nil
    }
}
