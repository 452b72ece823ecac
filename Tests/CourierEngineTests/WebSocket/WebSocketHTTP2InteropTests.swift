import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// Courier's RFC 8441 client against a server that is not Courier's: Hypercorn, whose HTTP/2
/// side announces `SETTINGS_ENABLE_CONNECT_PROTOCOL` and serves WebSockets as streams.
@Suite("WebSocket over HTTP/2 interop with Hypercorn")
struct WebSocketHTTP2InteropTests {
    @Test func socketsAreStreamsOfTheConnectionToHypercorn() async throws {
        let authority = try TestCertificateAuthority.shared
        let peer = try PythonWebSocketPeer.startHypercorn(tls: authority.serverChain(.valid))
        defer { peer.stop() }
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [authority.rootCertificateDER]
        let engine = try HTTPEngine(configuration: configuration)
        let request = try await engine.collect(EngineRequest(url: try #require(URL(string: "https://localhost:\(peer.port)/"))))
        #expect(String(buffer: request.body) == "ok 2")
        #expect(request.metrics.networkProtocolName == "h2")

        // The first socket: messages both ways over the stream, and Courier closes it.
        let url = try #require(URL(string: "wss://localhost:\(peer.port)/echo"))
        guard case .opened(let socket) = try await engine.openWebSocket(EngineRequest(url: url)) else {
            Issue.record("Hypercorn refused the extended CONNECT")
            await engine.shutdown()
            return
        }
        #expect(socket.metrics.networkProtocolName == "h2")
        #expect(socket.metrics.isReusedConnection, "the socket is a stream of the request's connection")
        #expect(socket.responseHead.status == .ok)
        #expect(try await socket.receive() == .text("http/2"), "Hypercorn saw the handshake arrive over HTTP/2")
        let text = String(repeating: "over an h2 stream ", count: 4_000)
        try await socket.send(.text(text))
        #expect(try await socket.receive() == .text(text))
        let bytes = ByteBuffer(bytes: (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try await socket.send(.binary(bytes))
        #expect(try await socket.receive() == .binary(bytes))
        #expect(try await socket.ping() > .zero)
        let during = try await engine.collect(EngineRequest(url: try #require(URL(string: "https://localhost:\(peer.port)/during"))))
        #expect(during.metrics.isReusedConnection, "the request shares the socket's connection")
        await socket.close(code: 1000, reason: "done")
        #expect(socket.closeStatus?.code == 1000)
        #expect(await socket.ended().error == nil)

        // The second socket is another stream of the same connection; Hypercorn closes it.
        // (That comes last: Hypercorn 0.18 forgets a stream as soon as its application returns,
        // and the close frame a client then echoes, as RFC 6455 asks, can arrive after it forgot
        // and fail its whole connection with a KeyError.)
        guard case .opened(let second) = try await engine.openWebSocket(EngineRequest(url: url)) else {
            Issue.record("Hypercorn refused the second extended CONNECT")
            await engine.shutdown()
            return
        }
        #expect(second.metrics.networkProtocolName == "h2")
        #expect(second.metrics.isReusedConnection)
        #expect(try await second.receive() == .text("http/2"))
        try await second.send(.text("close:4001:bye"))
        #expect(await receiveFailure(second) == .closedByServer(code: 4001, reason: "bye"))
        await engine.shutdown()
    }
}
