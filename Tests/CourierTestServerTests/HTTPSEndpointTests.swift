import CourierTestServer
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@Suite("TestServer over HTTPS")
struct HTTPSEndpointTests {
    /// Collects every byte until the connection closes, and the certificate the server presented.
    final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private var bytes: [UInt8] = []
        private var peer: [UInt8] = []
        private let promise: EventLoopPromise<([UInt8], [UInt8])>

        init(promise: EventLoopPromise<([UInt8], [UInt8])>) { self.promise = promise }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if self.peer.isEmpty {
                // The handshake is over once application data arrives.
                self.peer = (try? context.pipeline.syncOperations.nioSSL_peerCertificate()?.toDERBytes()) ?? []
            }
            self.bytes += Array(Self.unwrapInboundIn(data).readableBytesView)
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.promise.succeed((self.bytes, self.peer))
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.promise.fail(error)
            context.close(promise: nil)
        }
    }

    /// One request over TLS, trusting only the test CA's root; returns the raw response and
    /// the DER of the certificate the server presented.
    static func httpsRequest(
        to server: TestServer,
        target: String,
        serverHostname: String,
        trusting root: [UInt8]
    ) async throws -> (ParsedResponse, [UInt8]) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([try NIOSSLCertificate(bytes: root, format: .der)])
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.any().makePromise(of: ([UInt8], [UInt8]).self)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: serverHostname)
                    )
                    try channel.pipeline.syncOperations.addHandler(Collector(promise: promise))
                }
            }
            .connect(host: server.host, port: server.port)
            .get()
        let request = "GET \(target) HTTP/1.1\r\nHost: \(serverHostname):\(server.port)\r\nConnection: close\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: request))
        let (bytes, peer) = try await promise.futureResult.get()
        guard let response = ParsedResponse(bytes) else {
            throw RawHTTPClient.Failure(description: "no HTTP response over TLS (\(bytes.count) bytes)")
        }
        return (response, peer)
    }

    @Test("a .valid server answers httpbin requests over HTTPS and presents the chosen leaf")
    func validChain() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            #expect(server.baseURL.absoluteString == "https://127.0.0.1:\(server.port)")
            let authority = server.certificateAuthority
            let (response, leaf) = try await Self.httpsRequest(
                to: server,
                target: "/get?secure=1",
                serverHostname: "localhost",
                trusting: authority.rootCertificateDER
            )
            #expect(response.status == 200)
            #expect(response.string("url") == "https://localhost:\(server.port)/get?secure=1")
            #expect(leaf == authority.serverChain(.valid).certificatesDER[0])
        }
    }

    @Test("a .wrongHost server presents the leaf for wrong.host.example")
    func wrongHostChain() async throws {
        try await TestServer.withRunning(.init(tls: .wrongHost)) { server in
            let authority = server.certificateAuthority
            let (response, leaf) = try await Self.httpsRequest(
                to: server,
                target: "/status/204",
                serverHostname: "wrong.host.example",
                trusting: authority.rootCertificateDER
            )
            #expect(response.status == 204)
            #expect(leaf == authority.serverChain(.wrongHost).certificatesDER[0])
        }
    }

    @Test("fault endpoints work over TLS too")
    func faultOverTLS() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let (response, _) = try await Self.httpsRequest(
                to: server,
                target: "/fault/close-delimited?bytes=26",
                serverHostname: "localhost",
                trusting: server.certificateAuthority.rootCertificateDER
            )
            #expect(response.statusLine == "HTTP/1.0 200 OK")
            #expect(response.body == Array("abcdefghijklmnopqrstuvwxyz".utf8))
        }
    }

    @Test("shutdown of a TLS server closes idle, mid-handshake and stalled connections promptly")
    func tlsShutdown() async throws {
        let server = try await TestServer.start(.init(tls: .valid))
        // A TCP connection that never starts the handshake.
        let idle = try RawHTTPClient.connect(host: server.host, port: server.port, timeout: 20)
        defer { close(idle) }
        // A TLS connection waiting for an answer that never comes.
        let stalled = Task {
            try await Self.httpsRequest(
                to: server,
                target: "/fault/no-response",
                serverHostname: "localhost",
                trusting: server.certificateAuthority.rootCertificateDER
            )
        }
        for _ in 0..<300 where server.requestsReceived == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(server.requestsReceived == 1)
        #expect(server.connectionsAccepted == 2)
        try await server.shutdown()
        // Shutdown closed the idle connection itself (no timed assertion: the socket's 20 s
        // receive timeout only bounds a hang; an open socket would end `.timedOut`).
        let idleEnd = try RawHTTPClient.readAll(idle, stopWhenComplete: false).end
        #expect(idleEnd == .closed || idleEnd == .reset)
        // The stalled request ends without a response.
        await #expect(throws: (any Error).self) { _ = try await stalled.value }
    }
}
