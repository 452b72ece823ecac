public import NIOCore

/// How an ``HTTPEngine`` connects, pools and times out. Every value has a sensible default.
public struct EngineConfiguration: Sendable {
    /// Time allowed for the TCP connect plus the TLS handshake. Default 30 s.
    public var connectTimeout: TimeAmount = .seconds(30)
    /// A request fails when no byte moves in either direction for this long (like
    /// `URLRequest.timeoutInterval`). Default 60 s. A request may override it.
    public var idleTimeout: TimeAmount = .seconds(60)
    /// Connections open at once to one scheme + host + port. Requests beyond it wait in a FIFO
    /// queue. Default 6.
    public var maximumConnectionsPerHost: Int = 6
    /// Idle pooled connections kept per host; extra ones are closed when released. Default 6.
    public var maximumIdleConnectionsPerHost: Int = 6
    /// An idle pooled connection is closed after this long. Default 60 s.
    public var connectionIdleTimeout: TimeAmount = .seconds(60)
    /// TLS: trust roots, minimum version, client identity, the certificate-chain verifier.
    public var tls: EngineTLSConfiguration = .init()
    /// A forward proxy for every request, or nil (the default) to connect directly.
    public var proxy: EngineProxy?
    /// Response decompression (gzip and deflate). Default on, with a guard against bombs.
    public var decompression: Decompression = .enabled()
    /// Replaces DNS (tests): the addresses a host name resolves to, in the order to try them.
    var resolveOverride: (@Sendable (_ host: String, _ port: Int) -> [SocketAddress])?

    /// Whether and how far responses are decompressed.
    public enum Decompression: Sendable {
        /// Bodies are delivered as the server sent them; no `Accept-Encoding` is added.
        case disabled
        /// `Accept-Encoding: deflate, gzip` is added when absent and compressed bodies are
        /// inflated. A body that expands past `ratio` times its compressed size, or past
        /// `maximumSize` bytes, fails with ``EngineError/decompressionLimitExceeded(_:)``.
        case enabled(ratio: Int = 100, maximumSize: Int = 1 << 30)
    }

    /// The defaults described on each property.
    public init() {}
}
