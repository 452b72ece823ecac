public import NIOCore

/// How an ``HTTPEngine`` connects, pools and times out. Every value has a sensible default.
public struct EngineConfiguration: Sendable {
    /// Time allowed for the name lookup, the TCP connect and the TLS handshake together (a
    /// resolver that doesn't answer ends the request then, with `timedOut(.connect)`).
    /// Default 30 s.
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
    /// A forward proxy for every request, or nil (the default) to connect directly. When set,
    /// it wins over ``proxyEnvironment``.
    public var proxy: EngineProxy?
    /// Proxies chosen per request from environment-style settings (`http_proxy`,
    /// `https_proxy`, `all_proxy`, `no_proxy`; see ``ProxyEnvironment``), used when ``proxy``
    /// is nil. Nil (the default): the environment is not consulted. Set it to
    /// ``ProxyEnvironment/process`` to follow this process's variables.
    public var proxyEnvironment: ProxyEnvironment?
    /// Unix domain sockets by host name: a request whose URL host is a key (compared
    /// case-insensitively; the key `*` matches every host) connects to that socket path
    /// instead of the network, as `http+unix://` URLs do. The URL's host still names the
    /// server: the `Host` header, and for `https` SNI and certificate verification. No name
    /// lookup, no proxy; connections are pooled per socket. Empty by default.
    public var unixSocketPaths: [String: String] = [:]
    /// How host names become addresses. Default ``SystemHostResolver`` (`getaddrinfo`). The
    /// connect timeout covers the lookup; ``resolveOverrides`` answer before it is asked.
    public var hostResolver: any HostResolver = SystemHostResolver()
    /// Addresses given for a host and port, used instead of the resolver (curl's
    /// `--resolve`); the first matching entry wins. They apply to the host a connection goes
    /// to: the URL's, a proxy's, or the one a ``connectToOverrides`` rule names. Empty by default.
    public var resolveOverrides: [ResolveOverride] = []
    /// Rules sending connections for a host and port elsewhere (curl's `--connect-to`); the
    /// first matching rule wins. Direct connections only (not through a proxy). Empty by default.
    public var connectToOverrides: [ConnectToOverride] = []
    /// Response decompression (gzip and deflate). Default on, with a guard against bombs.
    public var decompression: Decompression = .enabled()
    /// Which HTTP versions the engine speaks. Default ``HTTPVersionPolicy/automatic``: HTTP/2
    /// when the server picks it in the TLS handshake (ALPN), HTTP/1.1 otherwise.
    public var httpVersion: HTTPVersionPolicy = .automatic
    /// HTTP/2: the most streams (requests) one connection carries at once; the server's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` applies when lower. Default 1,000.
    public var maximumConcurrentStreamsPerConnection: Int = 1_000
    /// HTTP/2: the largest response header list accepted (`SETTINGS_MAX_HEADER_LIST_SIZE`,
    /// decoded bytes); a larger one fails the connection with
    /// ``EngineError/protocolViolation(_:)``. Default 64 KiB; taken as 1 KiB (1,024 bytes) … `UInt32.max`.
    public var http2MaximumHeaderListSize: Int = 64 * 1024
    /// HTTP/2: the receive window each stream keeps open (flow control): how much of a
    /// response may arrive before the caller reads it. Default 1 MiB; taken as 64 KiB (65,535
    /// bytes) … 1 GiB.
    public var http2StreamWindowSize: Int = 1 << 20
    /// HTTP/2 connection coalescing (RFC 9113 §9.1.1, by OkHttp's rules): a request to a host
    /// with no connection of its own rides an open HTTP/2 connection of another host when its
    /// name resolves to that connection's address, the ``EngineTLSConfiguration/verifier``
    /// trusts that connection's certificate chain for its name (pinning included), and it goes
    /// direct (no proxy) to the same port. A `421 Misdirected Request` sends it again on a
    /// connection of its own, and that host is not coalesced again. Needs a verifier (a
    /// session always has one). Default on.
    public var coalescesHTTP2Connections: Bool = true
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

    /// Which HTTP versions an engine speaks.
    public enum HTTPVersionPolicy: Sendable, Equatable {
        /// HTTP/1.1 only: ALPN offers `http/1.1`, one request per connection at a time.
        case http1Only
        /// Over TLS, ALPN offers `h2` and `http/1.1` and the engine speaks what the server
        /// picks; plain `http` stays HTTP/1.1. The default.
        case automatic
        /// HTTP/2 without negotiation: cleartext `http` URLs speak h2c with prior knowledge
        /// (RFC 9113 §3.3) and TLS offers only `h2`. Opt-in, for servers known to speak it;
        /// a forward proxy for plain `http` keeps HTTP/1.1.
        case http2PriorKnowledge
    }

    /// The defaults described on each property.
    public init() {}
}
