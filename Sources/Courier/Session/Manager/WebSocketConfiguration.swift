/// How a session's WebSockets run (``SessionConfiguration/webSocket``).
public struct WebSocketConfiguration: Sendable {
    /// Sends a ping this often while a socket is open; nil (default): no automatic pings.
    public var pingInterval: Duration?
    /// How long a ping waits for its pong; then the connection is dropped (1006) and the task
    /// fails with `WebSocketError/pongTimedOut(seconds:)`. Default 30 s.
    public var pongTimeout: Duration = .seconds(30)
    /// Whether to offer RFC 7692 permessage-deflate (default true). Inflation is bounded by
    /// the task's ``WebSocketTask/maximumMessageSize``: a message that inflates past it is a 1009.
    public var perMessageDeflate = true
    /// Whether a socket may be a stream of an HTTP/2 connection the session already has to
    /// its origin (RFC 8441), when that server allows extended CONNECT. Default true. A socket
    /// opens its own connection with an HTTP/1.1 Upgrade otherwise (no such connection, the
    /// server does not allow it, or all its streams are busy).
    public var allowsHTTP2 = true
    /// How long a close waits for the server's close frame before the connection is closed
    /// anyway. Default 5 s.
    public var closeTimeout: Duration = .seconds(5)

    /// The defaults documented on each property.
    public init() {}
}
