/// How the engine runs a WebSocket once it is open.
public struct WebSocketOptions: Sendable {
    /// The largest message (fragments joined, after inflation) accepted; a larger one closes
    /// the socket with 1009. 1 MiB by default, as `URLSessionWebSocketTask`'s. Taken between 1
    /// and 2^32-1 bytes.
    public var maximumMessageSize: Int = 1 << 20
    /// Sends a ping this often; nil: no automatic pings.
    public var pingInterval: Duration?
    /// How long a ping waits for its pong; then the connection is dropped (1006).
    public var pongTimeout: Duration = .seconds(30)
    /// How long a close waits for the server's close frame (and, after the server's close, for
    /// the server to end the connection) before the connection is closed anyway.
    public var closeTimeout: Duration = .seconds(5)
    /// Whether to offer RFC 7692 permessage-deflate.
    public var perMessageDeflate = true
    /// Whether the socket may be a stream of an HTTP/2 connection the engine already has to
    /// the origin, when its server allows it (RFC 8441); otherwise every socket opens its own
    /// HTTP/1.1 connection.
    public var allowsHTTP2 = true
    /// The subprotocols offered in `Sec-WebSocket-Protocol`, preferred first.
    public var protocols: [String] = []

    /// The defaults: 1 MiB messages, no automatic pings, a 30 s pong timeout, a 5 s close
    /// wait, permessage-deflate offered, HTTP/2 streams allowed, no subprotocol.
    public init() {}
}
