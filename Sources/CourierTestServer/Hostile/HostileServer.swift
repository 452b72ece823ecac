public import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A raw TCP (or TLS) server that runs a ``HostileScript`` on every connection: lying lengths,
/// resets, stalls, 1xx storms, gzip bombs, smuggling shapes. No HTTP codec: it writes exactly
/// the bytes its script says, so tests can check how a client survives a misbehaving server.
///
/// ```swift
/// try await HostileServer.withRunning(.lyingContentLength(claimed: "100", sent: 10)) { server in
///     // request server.url("/x"), then check server.openConnections == 0
/// }
/// ```
///
/// It listens on an ephemeral loopback port, on `MultiThreadedEventLoopGroup.singleton`, and
/// counts accepted and open connections so a test can assert that a client left no socket
/// behind. Thread-safe.
public final class HostileServer: Sendable {
    private let channel: any Channel
    private let state: HostileServerState

    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`: no trailing slash.
    public let baseURL: URL
    /// The script every connection runs.
    public let script: HostileScript

    /// TCP connections accepted so far.
    public var connectionsAccepted: Int { state.counts.withLock { $0.accepted } }
    /// Connections accepted and not yet closed (by either side).
    public var openConnections: Int { state.counts.withLock { $0.open.count } }
    /// The request heads read by ``HostileStep/readHead`` steps, oldest first, as text.
    public var requestHeads: [String] { state.counts.withLock { $0.heads } }

    private init(channel: any Channel, state: HostileServerState, port: Int, baseURL: URL, script: HostileScript) {
        self.channel = channel
        self.state = state
        self.port = port
        self.baseURL = baseURL
        self.script = script
    }

    /// Binds `127.0.0.1` on an ephemeral port and starts serving `script`.
    ///
    /// - Parameters:
    ///   - script: What every connection does.
    ///   - tls: The chain to present over TLS (see ``TestCertificateAuthority``), or `nil`
    ///     (default) for plain TCP.
    ///   - certificateAuthority: Whose chain; `nil` (default) uses ``TestCertificateAuthority/shared``.
    /// - Returns: The running server; call ``shutdown()`` when done.
    /// - Throws: Binding errors, or certificate and TLS configuration errors.
    public static func start(
        _ script: HostileScript, tls: ServerChainKind? = nil, certificateAuthority: TestCertificateAuthority? = nil
    ) async throws -> HostileServer {
        let sslContext: NIOSSLContext?
        if let tls {
            let authority = try certificateAuthority ?? TestCertificateAuthority.shared
            var configuration = try authority.serverChain(tls).makeServerTLSConfiguration()
            configuration.shutdownTimeout = .milliseconds(250)
            sslContext = try NIOSSLContext(configuration: configuration)
        } else {
            sslContext = nil
        }
        let state = HostileServerState()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                state.accepted(channel)
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext {
                        try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                    try pipeline.addHandler(HostileConnectionHandler(script: script, state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port,
            let baseURL = URL(string: "\(sslContext == nil ? "http" : "https")://127.0.0.1:\(port)")
        else {
            try? await channel.close()
            throw TestServerError.noLocalAddress
        }
        return HostileServer(channel: channel, state: state, port: port, baseURL: baseURL, script: script)
    }

    /// Starts a server, runs `body` with it, and shuts the server down whether `body` returns
    /// or throws.
    public static func withRunning<T>(
        _ script: HostileScript, tls: ServerChainKind? = nil, _ body: (HostileServer) async throws -> T
    ) async throws -> T {
        try await withScoped(try await start(script, tls: tls), shutdown: { try await $0.shutdown() }, body)
    }

    /// `baseURL` followed by `pathAndQuery` (which starts with `/`).
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery) ?? baseURL
    }

    /// Stops listening and closes every open connection (stalled ones included). Safe to call
    /// more than once.
    public func shutdown() async throws {
        try? await channel.close()
        for connection in state.closeAll() {
            try? await connection.close()
        }
    }

    deinit {
        channel.close(promise: nil)
        for connection in state.closeAll() { connection.close(promise: nil) }
    }
}

/// A hostile server's counters and open connections, shared by its event loops and tests.
final class HostileServerState: Sendable {
    struct Counts {
        var accepted = 0
        var open: [ObjectIdentifier: any Channel] = [:]
        var heads: [String] = []
        var isClosed = false
    }

    let counts = Mutex(Counts())

    func accepted(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let closeNow = counts.withLock { counts in
            counts.accepted += 1
            if counts.isClosed { return true }
            counts.open[id] = channel
            return false
        }
        if closeNow {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { _ in
            _ = self.counts.withLock { $0.open.removeValue(forKey: id) }
        }
    }

    func received(head: String) {
        counts.withLock { $0.heads.append(head) }
    }

    func closeAll() -> [any Channel] {
        counts.withLock { counts in
            counts.isClosed = true
            let channels = Array(counts.open.values)
            counts.open.removeAll()
            return channels
        }
    }
}
