/// How a WebSocket failed, once its handshake succeeded (a handshake the server refused is
/// the handshake result, not an error).
public enum WebSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server's `101` does not complete the handshake: a wrong `Sec-WebSocket-Accept`,
    /// no `Upgrade: websocket`, a protocol or extension that was not offered.
    case handshakeFailed(String)
    /// The server broke RFC 6455 (or RFC 7692): Courier closed the socket with `code`
    /// (1002, 1007 or 1009) and says why.
    case protocolViolation(code: WebSocketCloseCode, reason: String)
    /// The server closed with a code other than 1000 or 1001 (its reason attached).
    case closedByServer(code: Int, reason: String)
    /// The socket is closed: nothing more can be sent (`code` and `reason` are how it closed).
    case closed(code: Int, reason: String)
    /// No pong came back within the pong timeout: the connection was dropped (1006).
    case pongTimedOut(seconds: Double)
    /// The connection ended without a close frame (1006), with what ended it.
    case connectionLost(String)

    /// The close code the socket ended with because of this error.
    public var closeCode: Int {
        switch self {
        case .handshakeFailed: 1002
        case .protocolViolation(let code, _): code.rawValue
        case .closedByServer(let code, _), .closed(let code, _): code
        case .pongTimedOut, .connectionLost: WebSocketCloseCode.abnormalClosure.rawValue
        }
    }

    /// What went wrong, in words.
    public var description: String {
        switch self {
        case .handshakeFailed(let reason):
            "the WebSocket handshake failed: \(reason)"
        case .protocolViolation(let code, let reason):
            "Courier closed the WebSocket with \(code): \(reason)"
        case .closedByServer(let code, let reason):
            "the server closed the WebSocket with \(WebSocketCloseCode.describe(code))" + (reason.isEmpty ? "" : ": \(reason)")
        case .closed(let code, let reason):
            "the WebSocket is closed (\(WebSocketCloseCode.describe(code))" + (reason.isEmpty ? ")" : ": \(reason))")
        case .pongTimedOut(let seconds):
            "no pong within \(seconds) s: the WebSocket connection was dropped (1006)"
        case .connectionLost(let reason):
            "the WebSocket connection ended without a close frame (1006): \(reason)"
        }
    }
}
