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
    /// Whether a `wss` socket may use HTTP/2 (RFC 8441). Default true; sockets currently open
    /// over HTTP/1.1 Upgrade whatever this says.
    public var allowsHTTP2 = true
    /// How long a close waits for the server's close frame before the connection is closed
    /// anyway. Default 5 s.
    public var closeTimeout: Duration = .seconds(5)

    /// The defaults documented on each property.
    public init() {}
}
