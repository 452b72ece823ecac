public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

/// An httpbin-compatible HTTP/1.1 server with fault endpoints, for tests, demos and
/// `courier serve`.
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { try await server.shutdown() } }
/// let url = server.baseURL.appendingPathComponent("get")
/// ```
///
/// The server runs on `MultiThreadedEventLoopGroup.singleton`, binds an ephemeral loopback
/// port by default, and starts and stops in milliseconds, so every test can have its own.
/// Endpoints are listed in `Sources/CourierTestServer/README.md`.
public final class TestServer: Sendable {
    /// How a server listens and whether it speaks TLS.
    public struct Configuration: Sendable {
        /// The address to bind: `127.0.0.1` (default), `::1` for IPv6, or any local address.
        public var host: String
        /// The port to bind; `0` (default) picks a free ephemeral port.
        public var port: Int
        /// The certificate chain to present over TLS; `nil` (default) serves plain HTTP.
        public var tls: ServerChainKind?
        /// With TLS, whether clients must present a certificate issued by the
        /// certificate authority (mutual TLS). Default `false`.
        public var requireClientCertificate: Bool
        /// The certificate authority whose chains the server presents;
        /// `nil` (default) uses `TestCertificateAuthority.shared`.
        public var certificateAuthority: TestCertificateAuthority?
        /// HTTP/2: over TLS the server advertises `h2` beside `http/1.1` (ALPN) and serves
        /// every endpoint on either; `nil` keeps HTTPS at HTTP/1.1. Default: HTTP/2 with the
        /// usual settings. See ``HTTP2Options`` for the HTTP/2 fault modes and h2c.
        public var http2: HTTP2Options?
        /// Listen on this Unix domain socket instead of ``host`` and ``port`` (a file left at
        /// the path by an earlier run is replaced). The server's ``TestServer/baseURL`` is then
        /// `http+unix://` (or `https+unix://`) with the path percent-encoded as the host, and
        /// its ``TestServer/port`` is 0. Default nil: TCP.
        public var unixSocketPath: String?

        /// Creates a configuration; every parameter has the default documented on its property.
        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            tls: ServerChainKind? = nil,
            requireClientCertificate: Bool = false,
            certificateAuthority: TestCertificateAuthority? = nil,
            http2: HTTP2Options? = HTTP2Options(),
            unixSocketPath: String? = nil
        ) {
            self.http2 = http2
            self.unixSocketPath = unixSocketPath
            self.host = host
            self.port = port
            self.tls = tls
            self.requireClientCertificate = requireClientCertificate
            self.certificateAuthority = certificateAuthority
        }
    }

    /// How the server speaks HTTP/2, including its connection-level fault modes.
    public struct HTTP2Options: Sendable {
        /// `SETTINGS_MAX_CONCURRENT_STREAMS` announced to clients. Default 100; 1 makes a
        /// client queue every request beyond the first.
        public var maximumConcurrentStreams: Int
        /// `SETTINGS_INITIAL_WINDOW_SIZE`: how much request body a client may send per stream
        /// before the server grants more. Default 65,535; 0 is a window that never opens
        /// (the server never reads an upload).
        public var initialWindowSize: Int
        /// After this many streams on one connection the server sends `GOAWAY` naming the
        /// last of them: those finish, later ones are refused. `nil` (default): never.
        public var goAwayAfterStreams: Int?
        /// Plain `http` speaks HTTP/2 with prior knowledge (h2c) instead of HTTP/1.1.
        /// Default `false`.
        public var cleartext: Bool
        /// Announces `SETTINGS_ENABLE_CONNECT_PROTOCOL = 1` and serves the `/ws/…` endpoints
        /// as RFC 8441 extended-CONNECT streams. Default `true`; `false` leaves WebSockets to
        /// HTTP/1.1.
        public var webSockets: Bool

        /// Creates options; every parameter has the default documented on its property.
        public init(
            maximumConcurrentStreams: Int = 100,
            initialWindowSize: Int = 65_535,
            goAwayAfterStreams: Int? = nil,
            cleartext: Bool = false,
            webSockets: Bool = true
        ) {
            self.maximumConcurrentStreams = maximumConcurrentStreams
            self.initialWindowSize = initialWindowSize
            self.goAwayAfterStreams = goAwayAfterStreams
            self.cleartext = cleartext
            self.webSockets = webSockets
        }
    }

    private let channel: any Channel
    private let registry: ConnectionRegistry

    /// The address the server listens on, as configured (`127.0.0.1`, `::1`, ...).
    public let host: String
    /// The port the server listens on (the ephemeral port chosen when configured with `0`).
    public let port: Int
    /// `http://127.0.0.1:PORT`, `https://[::1]:PORT`, ...: no trailing slash. On a Unix
    /// domain socket, `http+unix://%2Ftmp%2Fserver.sock`.
    public let baseURL: URL
    /// The certificate authority behind the server's TLS chains (also when serving plain HTTP),
    /// for clients to trust or pin.
    public let certificateAuthority: TestCertificateAuthority
    /// The configuration the server was started with.
    public let configuration: Configuration

    /// TCP connections accepted so far.
    public var connectionsAccepted: Int { self.registry.acceptedCount }

    /// TCP connections open now (accepted and not yet closed by either side): shows that a
    /// client closed a connection it abandoned.
    public var connectionsOpen: Int { self.registry.openCount }

    /// Request heads received so far (including requests answered with an error).
    public var requestsReceived: Int { self.registry.requestCount }

    /// The connection-level flow-control credit HTTP/2 clients granted so far (the sum of the
    /// increments of their `WINDOW_UPDATE` frames on stream 0): shows how large a connection
    /// window a client opened beyond the protocol's initial 65,535 bytes.
    public var http2ConnectionWindowCredit: Int { self.registry.http2ConnectionCredit }

    /// Request heads received so far for `path` (matched without the query string: `/cache/60`
    /// counts `/cache/60?x=1` too). Lets a test prove that a cache hit or a merged download sent nothing.
    public func requestsReceived(forPath path: String) -> Int { self.registry.requestCount(forPath: path) }

    /// The close codes WebSocket clients sent to the `/ws/…` endpoints, in order (nil: a close
    /// frame without a code).
    public var webSocketClosesReceived: [Int?] { self.registry.webSocketCloses }

    /// The payloads of the pongs WebSocket clients sent to the `/ws/…` endpoints, in order.
    public var webSocketPongsReceived: [[UInt8]] { self.registry.webSocketPongs }

    private init(
        channel: any Channel,
        registry: ConnectionRegistry,
        port: Int,
        baseURL: URL,
        certificateAuthority: TestCertificateAuthority,
        configuration: Configuration
    ) {
        self.channel = channel
        self.registry = registry
        self.host = configuration.host
        self.port = port
        self.baseURL = baseURL
        self.certificateAuthority = certificateAuthority
        self.configuration = configuration
    }

    /// Binds and starts a server.
    ///
    /// - Parameter configuration: Where to listen and whether to use TLS; by default plain
    ///   HTTP on `127.0.0.1` and an ephemeral port.
    /// - Returns: The running server; call `shutdown()` when done.
    /// - Throws: Binding errors (address in use, address not available), or certificate
    ///   generation and TLS configuration errors.
    public static func start(_ configuration: Configuration = .init()) async throws -> TestServer {
        let authority = try configuration.certificateAuthority ?? TestCertificateAuthority.shared
        let sslContext: NIOSSLContext?
        if let kind = configuration.tls {
            var tlsConfiguration = try authority.serverChain(kind).makeServerTLSConfiguration(
                requireClientCertificateSignedBy: configuration.requireClientCertificate ? authority.rootCertificateDER : nil
            )
            // On close, NIOSSL waits this long for the peer's close_notify (default 5 s); a
            // stalled or misbehaving client must not hold up `shutdown()` or a fault's close.
            tlsConfiguration.shutdownTimeout = .milliseconds(250)
            if configuration.http2 != nil {
                tlsConfiguration.applicationProtocols = ["h2", "http/1.1"]
            }
            sslContext = try NIOSSLContext(configuration: tlsConfiguration)
        } else {
            sslContext = nil
        }

        let registry = ConnectionRegistry()
        let scheme = sslContext == nil ? "http" : "https"
        let router = RequestRouter()

        var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
        if configuration.unixSocketPath == nil {
            bootstrap = bootstrap
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        }
        bootstrap = bootstrap
            .childChannelInitializer { [http2 = configuration.http2] channel in
                registry.accepted(channel)
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    let server = ServerPipeline(router: router, registry: registry, scheme: scheme, http2: http2)
                    if let sslContext {
                        try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                        if http2 != nil {
                            try pipeline.addHandler(
                                ApplicationProtocolNegotiationHandler { result, channel in
                                    channel.eventLoop.makeCompletedFuture {
                                        if case .negotiated("h2") = result {
                                            try server.configureHTTP2(channel)
                                        } else {
                                            try server.configureHTTP1(channel)
                                        }
                                    }
                                })
                            return
                        }
                    } else if http2?.cleartext == true {
                        try server.configureHTTP2(channel)
                        return
                    }
                    try server.configureHTTP1(channel)
                }
            }
        if let path = configuration.unixSocketPath {
            let channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            let encoded = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? path
            guard let baseURL = URL(string: "\(scheme)+unix://\(encoded)") else {
                try? await channel.close()
                throw TestServerError.noLocalAddress
            }
            return TestServer(
                channel: channel, registry: registry, port: 0, baseURL: baseURL, certificateAuthority: authority,
                configuration: configuration)
        }
        let channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()

        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw TestServerError.noLocalAddress
        }
        let hostInURL = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        guard let baseURL = URL(string: "\(scheme)://\(hostInURL):\(port)") else {
            try? await channel.close()
            throw TestServerError.noLocalAddress
        }
        return TestServer(
            channel: channel,
            registry: registry,
            port: port,
            baseURL: baseURL,
            certificateAuthority: authority,
            configuration: configuration
        )
    }

    /// Starts a server, runs `body` with it, and shuts the server down whether `body` returns
    /// or throws.
    public static func withRunning<T>(
        _ configuration: Configuration = .init(), _ body: (TestServer) async throws -> T
    ) async throws -> T {
        try await withScoped(try await start(configuration), shutdown: { try await $0.shutdown() }, body)
    }

    /// Stops listening and closes every open connection, stalled ones included.
    /// Safe to call more than once. A server released without `shutdown()` still closes its
    /// sockets, without waiting.
    public func shutdown() async throws {
        try? await self.channel.close()
        await self.registry.closeAll()
        if let path = configuration.unixSocketPath { try? FileManager.default.removeItem(atPath: path) }
    }

    deinit {
        self.channel.close(promise: nil)
        self.registry.startClosingAll()
    }
}

/// Errors thrown by `TestServer.start(_:)` besides NIO's binding errors.
public enum TestServerError: Error, Sendable {
    /// The listening socket reported no local address or port.
    case noLocalAddress
}

/// Runs `body` with `resource`, then `shutdown`s it whether `body` returns or throws (a
/// failure to shut down after a thrown error is dropped: the body's error is the one to see).
func withScoped<Resource, T>(
    _ resource: Resource, shutdown: (Resource) async throws -> Void, _ body: (Resource) async throws -> T
) async throws -> T {
    do {
        let result = try await body(resource)
        try await shutdown(resource)
        return result
    } catch {
        try? await shutdown(resource)
        throw error
    }
}
