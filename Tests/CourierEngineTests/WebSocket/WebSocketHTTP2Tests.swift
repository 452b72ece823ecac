import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// WebSockets as streams of an HTTP/2 connection (RFC 8441) against the test server over TLS:
/// a socket rides the connection the engine already has when the server allows extended
/// CONNECT, holds one of its streams while open, and falls back to an HTTP/1.1 upgrade
/// otherwise.
@Suite("WebSocket over HTTP/2 (RFC 8441)")
struct WebSocketHTTP2Tests {
    private func trusting(_ configure: (inout EngineConfiguration) -> Void = { _ in }) throws -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        configure(&configuration)
        return configuration
    }

    private func url(_ scheme: String, _ server: TestServer, _ path: String) throws -> URL {
        try #require(URL(string: "\(scheme)://localhost:\(server.port)\(path)"))
    }

    /// Opens `path` and fails the test on a refusal.
    private func open(
        _ engine: HTTPEngine, _ server: TestServer, _ path: String, options: WebSocketOptions = .init()
    ) async throws -> WebSocketConnection {
        switch try await engine.openWebSocket(EngineRequest(url: try url("wss", server, path)), options: options) {
        case .opened(let socket):
            return socket
        case .refused(let head, _, _):
            Issue.record("the handshake was refused: \(head.status)")
            throw WebSocketError.handshakeFailed("refused \(head.status.code)")
        }
    }

    /// A GET that leaves the engine an HTTP/2 connection to the server.
    private func warmUp(_ engine: HTTPEngine, _ server: TestServer) async throws {
        let response = try await engine.collect(EngineRequest(url: try url("https", server, "/get")))
        #expect(response.metrics.networkProtocolName == "h2")
    }

    @Test func aSocketIsAStreamOfTheOpenConnectionAndRequestsShareIt() async throws {
        try await withEngine(server: .init(tls: .valid), engine: try trusting()) { engine, server in
            try await warmUp(engine, server)
            let socket = try await open(engine, server, "/ws/echo")
            #expect(socket.metrics.networkProtocolName == "h2")
            #expect(socket.metrics.isReusedConnection)
            #expect(socket.responseHead.status == .ok, "an extended CONNECT is accepted with 200, not 101")
            #expect(socket.perMessageDeflate != nil)
            try await socket.send(.text("héllo over h2"))
            #expect(try await socket.receive() == .text("héllo over h2"))
            let bytes = ByteBuffer(bytes: (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try await socket.send(.binary(bytes))
            #expect(try await socket.receive() == .binary(bytes))
            let during = try await engine.collect(EngineRequest(url: try url("https", server, "/get?during=1")))
            #expect(during.head.status == .ok)
            await socket.close(code: 1000, reason: "done")
            #expect(socket.closeStatus?.code == 1000)
            #expect(try await socket.receive() == nil)
            #expect(await closeCodeTheServerReceived(server) == .some(1000))
            let after = try await engine.collect(EngineRequest(url: try url("https", server, "/get?after=1")))
            #expect(after.metrics.isReusedConnection, "closing the socket's stream leaves the connection")
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func withoutAnOpenConnectionTheSocketUpgradesItsOwn() async throws {
        try await withEngine(server: .init(tls: .valid), engine: try trusting()) { engine, server in
            let socket = try await open(engine, server, "/ws/echo")
            #expect(socket.metrics.networkProtocolName == "http/1.1")
            #expect(socket.responseHead.status == .switchingProtocols)
            try await socket.send(.text("h1"))
            #expect(try await socket.receive() == .text("h1"))
            await socket.close()
        }
    }

    @Test func aServerThatDoesNotAllowExtendedConnectGetsAnUpgrade() async throws {
        var configuration = TestServer.Configuration(tls: .valid)
        configuration.http2 = .init(webSockets: false)
        try await withEngine(server: configuration, engine: try trusting()) { engine, server in
            try await warmUp(engine, server)
            let socket = try await open(engine, server, "/ws/echo")
            #expect(socket.metrics.networkProtocolName == "http/1.1")
            try await socket.send(.text("upgraded"))
            #expect(try await socket.receive() == .text("upgraded"))
            await socket.close()
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test func allowsHTTP2OffKeepsSocketsOnTheirOwnConnections() async throws {
        try await withEngine(server: .init(tls: .valid), engine: try trusting()) { engine, server in
            try await warmUp(engine, server)
            var options = WebSocketOptions()
            options.allowsHTTP2 = false
            let socket = try await open(engine, server, "/ws/echo", options: options)
            #expect(socket.metrics.networkProtocolName == "http/1.1")
            await socket.close()
        }
    }

    @Test func socketsHoldStreamsUpToTheServersLimitAndGiveThemBack() async throws {
        var configuration = TestServer.Configuration(tls: .valid)
        configuration.http2 = .init(maximumConcurrentStreams: 3)
        try await withEngine(server: configuration, engine: try trusting()) { engine, server in
            try await warmUp(engine, server)
            var sockets: [WebSocketConnection] = []
            for index in 0..<5 {
                let socket = try await open(engine, server, "/ws/echo")
                try await socket.send(.text("socket \(index)"))
                #expect(try await socket.receive() == .text("socket \(index)"))
                sockets.append(socket)
            }
            let protocols = sockets.map { $0.metrics.networkProtocolName ?? "?" }
            #expect(protocols == ["h2", "h2", "h2", "http/1.1", "http/1.1"], "three streams, then the connection is full")
            for socket in sockets { await socket.close() }
            let again = try await open(engine, server, "/ws/echo")
            #expect(again.metrics.networkProtocolName == "h2", "closed sockets gave their streams back")
            await again.close()
        }
    }

    @Test func aRefusalIsAnHTTPAnswerAndTheConnectionStays() async throws {
        try await withEngine(server: .init(tls: .valid), engine: try trusting()) { engine, server in
            try await warmUp(engine, server)
            let missing = try await engine.openWebSocket(EngineRequest(url: try url("wss", server, "/ws/no-such-endpoint")))
            guard case .refused(let head, let body, let metrics) = missing else {
                Issue.record("an unknown endpoint was opened")
                return
            }
            #expect(head.status == .notFound)
            #expect(String(buffer: body) == "No such WebSocket endpoint\n")
            #expect(metrics.networkProtocolName == "h2")
            let locked = try await engine.openWebSocket(EngineRequest(url: try url("wss", server, "/ws/basic-auth/user/pass")))
            guard case .refused(let challenge, _, _) = locked else {
                Issue.record("a protected endpoint was opened without credentials")
                return
            }
            #expect(challenge.status == .unauthorized)
            #expect(challenge.headers.first(name: "www-authenticate") == "Basic realm=\"ws\"")
            var request = EngineRequest(url: try url("wss", server, "/ws/basic-auth/user/pass"))
            request.headers.add(name: "Authorization", value: "Basic " + Data("user:pass".utf8).base64EncodedString())
            guard case .opened(let socket) = try await engine.openWebSocket(request) else {
                Issue.record("the credentials were refused")
                return
            }
            #expect(socket.metrics.networkProtocolName == "h2")
            await socket.close()
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func flowControlCarriesFarMoreThanTheStreamWindow() async throws {
        let configuration = try trusting { $0.http2StreamWindowSize = 65_535 }
        try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
            try await warmUp(engine, server)
            let socket = try await open(engine, server, "/ws/flood?count=64&size=65536&deflate=off")
            #expect(socket.metrics.networkProtocolName == "h2")
            // Compared whole (memcmp): a byte-by-byte check takes seconds in a debug build.
            let expected = ByteBuffer(repeating: 0x62, count: 65_536)
            for _ in 0..<64 {
                guard case .binary(let payload) = try await socket.receive() else {
                    Issue.record("a flood message was missing")
                    return
                }
                #expect(payload == expected)
            }
            await socket.close()
        }
    }

    @Test func theProtocolRulesHoldOnAStream() async throws {
        try await withEngine(server: .init(tls: .valid), engine: try trusting()) { engine, server in
            try await warmUp(engine, server)
            let badText = try await open(engine, server, "/ws/hostile/bad-utf8")
            #expect(await receiveFailure(badText)?.violationCode == .invalidFramePayloadData)
            let masked = try await open(engine, server, "/ws/hostile/masked")
            #expect(await receiveFailure(masked)?.violationCode == .protocolError)
            let closing = try await open(engine, server, "/ws/close?code=4001&reason=bye")
            let failure = await receiveFailure(closing)
            guard case .closedByServer(let code, let reason) = failure else {
                Issue.record("expected the server's close, got \(String(describing: failure))")
                return
            }
            #expect(code == 4001)
            #expect(reason == "bye")
            let after = try await engine.collect(EngineRequest(url: try url("https", server, "/get")))
            #expect(after.metrics.isReusedConnection, "a socket's violation ends its stream, not the connection")
            #expect(server.connectionsAccepted == 1)
        }
    }
}
