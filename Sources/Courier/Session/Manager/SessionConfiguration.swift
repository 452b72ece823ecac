public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// How a session manager's requests behave: timeouts, connections, default headers, TLS,
/// decompression and redirects. Like `URLSessionConfiguration`, as a value.
public struct SessionConfiguration: Sendable {
    /// A request fails when no byte moves for this long (`timeoutIntervalForRequest`). 60 s.
    public var timeoutIntervalForRequest: TimeInterval = 60
    /// A task fails when it has not finished after this long (`timeoutIntervalForResource`):
    /// one deadline, fixed when the task starts, for all of it (name lookup, connect, proxy
    /// handshake, TLS, every redirect, answers to authentication challenges and retries). The
    /// error, ``CourierError/timedOut(url:reason:)``, says where the task was ("deadline
    /// timeout during the TLS handshake", "… while waiting for the response (on redirect 3)").
    /// Default 7 days, as in URLSession.
    public var timeoutIntervalForResource: TimeInterval = 7 * 24 * 3600
    /// TCP connect plus TLS handshake. 30 s.
    public var connectTimeout: TimeInterval = 30
    /// Connections open at once per host (`httpMaximumConnectionsPerHost`). 6.
    public var httpMaximumConnectionsPerHost: Int = 6
    /// Headers added to every request that doesn't already carry them.
    public var httpAdditionalHeaders: [String: String] = [:]
    /// Redirects followed before a task fails with ``CourierError/tooManyRedirects(url:limit:)``.
    /// 16. Zero disables following (the 3xx response is delivered).
    public var maximumRedirects: Int = 16
    /// Whether responses are decompressed (gzip, deflate). On.
    public var decompressesResponses: Bool = true
    /// Which HTTP versions the session speaks: HTTP/2 when the server picks it during the TLS
    /// handshake, else HTTP/1.1 (`EngineConfiguration.HTTPVersionPolicy.automatic`, the
    /// default); `.http1Only`; or `.http2PriorKnowledge` (h2c for plain `http`, opt-in).
    public var httpVersion: EngineConfiguration.HTTPVersionPolicy = .automatic
    /// HTTP/2 connection coalescing: a request to a host with no connection of its own rides
    /// the open HTTP/2 connection of another host when its name resolves to that connection's
    /// address and the connection's certificate is trusted for its name under the session's
    /// ``SecurityPolicy`` (pinning included); a `421 Misdirected Request` sends it again on a
    /// connection of its own. Metrics name the host whose connection carried it
    /// (`coalescedConnectionHost`). Default `true`.
    public var coalescesHTTP2Connections = true
    /// TLS settings handed to the engine (trust roots, minimum version, client identity).
    public var tls: EngineTLSConfiguration = .init()
    /// A forward HTTP proxy for every request (`CONNECT` tunnels for https, so TLS and the
    /// security policy stay end to end with the origin), or nil (the default) to connect
    /// directly. A SOCKS5 proxy is an `EngineProxy` of kind `.socks5` or `.socks5h`. When
    /// set, it wins over ``proxyEnvironment``.
    public var proxy: EngineProxy?
    /// Proxies chosen per request from `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy`
    /// with curl's rules (`ProxyEnvironment`; the upper-case `HTTP_PROXY` is ignored), used
    /// when ``proxy`` is nil. Nil (the default): the environment is not consulted. Opt in with
    /// `configuration.proxyEnvironment = .process`, or give the variables yourself:
    /// `ProxyEnvironment(environment: ["https_proxy": "socks5h://127.0.0.1:1080"])`.
    public var proxyEnvironment: ProxyEnvironment?
    /// Unix domain sockets by host name (`["docker": "/var/run/docker.sock"]`): a request to
    /// `http://docker/v1.45/info` connects to that socket, and the URL's host stays the
    /// server's name (the `Host` header; for https, SNI and the certificate checked). The key
    /// `*` matches every host; names compare case-insensitively. `http+unix://` and
    /// `https+unix://` URLs (the socket's path percent-encoded as the host) need no entry.
    /// Sockets skip name lookup and proxies; connections are pooled per socket. Empty by default.
    public var unixSocketPaths: [String: String] = [:]
    /// How host names become addresses: `SystemHostResolver` (`getaddrinfo`) by default, or
    /// any `HostResolver`. The connect timeout covers the lookup.
    public var hostResolver: any HostResolver = SystemHostResolver()
    /// Addresses given for a host and port instead of asking ``hostResolver`` (curl's
    /// `--resolve HOST:PORT:ADDRESS[,ADDRESS]`; see `ResolveOverride`). TLS still checks the
    /// URL's host; a task's metrics say an override chose the address
    /// (`EngineMetrics.addressOverride`). Empty by default.
    public var resolveOverrides: [ResolveOverride] = []
    /// Rules sending connections for a host and port to another (curl's `--connect-to
    /// HOST1:PORT1:HOST2:PORT2`; see `ConnectToOverride`), for direct connections. TLS still
    /// checks the URL's host. Empty by default.
    public var connectToOverrides: [ConnectToOverride] = []
    /// Where cookies are kept: responses' `Set-Cookie` headers (on every hop, redirects
    /// included) are stored in it, and requests get a `Cookie` header from it unless they
    /// carry one or set `httpShouldHandleCookies = false`. Nil (the default): no cookies are
    /// stored or sent. The jar applies RFC 6265bis's rules (public suffixes, `Secure`,
    /// `Max-Age`, prefixes; see ``HTTPCookieJar``) and keeps cookies in memory. Configurations
    /// (and managers) given the same jar share its cookies.
    public var cookieJar: HTTPCookieJar?
    /// HTTP Strict Transport Security (RFC 6797): responses received over https teach it their
    /// `Strict-Transport-Security`, and `http://` requests to the hosts it knows are sent as
    /// `https://` before a byte leaves (port 80 becomes 443; another explicit port is kept, as
    /// curl does). Nil (the default): off, as in curl; URLSession, by contrast, applies HSTS
    /// always. See ``HSTSStore`` for the rules and its file (`HSTSStore(contentsOf:)`,
    /// `write(to:)`). Configurations given the same store share what it learnt.
    public var hsts: HSTSStore?

    /// Superseded by ``cookieJar``. The session no longer reads or writes a Foundation
    /// `HTTPCookieStorage`: FoundationNetworking's storage on Linux accepts `Domain=com`,
    /// ignores `Max-Age` and sends `Secure` cookies over http, and writes its file on the
    /// calling thread. For source compatibility, setting a storage here gives the
    /// configuration a new, empty ``HTTPCookieJar`` when ``cookieJar`` is nil (so cookies keep
    /// working, under the jar's rules); the storage itself is only remembered, for this getter.
    /// Setting nil also sets ``cookieJar`` to nil. Cookies already in the storage are not
    /// imported.
    @available(*, deprecated, renamed: "cookieJar", message: "the session keeps cookies in cookieJar (RFC 6265bis rules); a storage set here is not read or written")
    public var httpCookieStorage: HTTPCookieStorage? {
        get { legacyCookieStorage }
        set {
            legacyCookieStorage = newValue
            if newValue == nil {
                cookieJar = nil
            } else if cookieJar == nil {
                cookieJar = HTTPCookieJar()
            }
        }
    }

    private var legacyCookieStorage: HTTPCookieStorage?
    /// The HTTP cache responses are stored in and answered from (RFC 9111, private; see
    /// ``HTTPCache``), or nil (the default) for no caching. Each request's `cachePolicy` is
    /// honoured (`.useProtocolCachePolicy`, `.reloadIgnoringLocalCacheData`,
    /// `.returnCacheDataElseLoad`, `.returnCacheDataDontLoad`). Sessions given the same cache
    /// share its entries.
    public var cache: HTTPCache?
    /// The largest response body a data or upload task gathers in memory, in bytes, or nil for
    /// no limit. Default ``defaultMaximumResponseBodySize`` (64 MiB). A response whose
    /// `Content-Length` is larger fails as soon as its head arrives; a body without a length
    /// fails once more bytes than this have arrived (after decompression). Either way the task
    /// fails with ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)`` and
    /// the transfer is cancelled, so no further bytes are read. Download tasks (which write to
    /// a file) and ``URLSessionManager/bytes(for:body:interceptor:)`` (which streams) are not limited.
    public var maximumResponseBodySize: Int64? = Self.defaultMaximumResponseBodySize
    /// The default of ``maximumResponseBodySize``: 64 MiB.
    public static let defaultMaximumResponseBodySize: Int64 = 64 << 20
    /// Logs, metrics and trace spans for this session's requests (swift-log, swift-metrics,
    /// swift-distributed-tracing): see ``SessionObservability``. Off by default (no logger, no
    /// metrics factory, no tracer), and then a request pays nothing for it.
    public var observability = SessionObservability()
    /// How WebSocket tasks run: automatic pings, the pong timeout, permessage-deflate, the
    /// close wait (``URLSessionManager/webSocketTask(with:protocols:)``).
    public var webSocket = WebSocketConfiguration()

    /// The defaults described on each property.
    public init() {}

    /// The default configuration.
    public static var `default`: SessionConfiguration { SessionConfiguration() }

    /// The engine configuration this session configuration implies.
    func engineConfiguration(verifier: (any ServerTrustVerifier)?) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        // Through SessionBridge.timeAmount: any number a caller sets (infinite, NaN) converts
        // without trapping; NaN keeps the engine's default.
        if let idle = SessionBridge.timeAmount(timeoutIntervalForRequest) { configuration.idleTimeout = idle }
        if let connect = SessionBridge.timeAmount(connectTimeout) { configuration.connectTimeout = connect }
        configuration.maximumConnectionsPerHost = httpMaximumConnectionsPerHost
        configuration.maximumIdleConnectionsPerHost = httpMaximumConnectionsPerHost
        configuration.decompression = decompressesResponses ? .enabled() : .disabled
        configuration.tls = tls
        configuration.proxy = proxy
        configuration.proxyEnvironment = proxyEnvironment
        configuration.unixSocketPaths = unixSocketPaths
        configuration.hostResolver = hostResolver
        configuration.resolveOverrides = resolveOverrides
        configuration.connectToOverrides = connectToOverrides
        configuration.httpVersion = httpVersion
        configuration.coalescesHTTP2Connections = coalescesHTTP2Connections
        if let verifier {
            configuration.tls.verifier = verifier
        }
        return configuration
    }
}
