import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// Courier and the Python `websockets` library, both ways: Courier's socket against its
/// server, its client against Courier's test server.
@Suite("WebSocket interop with Python websockets")
struct WebSocketInteropTests {
    @Test func courierTalksToThePythonServer() async throws {
        let peer = try PythonWebSocketPeer.startServer()
        defer { peer.stop() }
        let engine = try HTTPEngine()
        let url = try #require(URL(string: "ws://127.0.0.1:\(peer.port)/"))
        guard case .opened(let socket) = try await engine.openWebSocket(EngineRequest(url: url)) else {
            Issue.record("the Python server refused the handshake")
            await engine.shutdown()
            return
        }
        #expect(socket.perMessageDeflate != nil, "websockets agrees to permessage-deflate")
        let text = String(repeating: "interop ", count: 2_000)
        try await socket.send(.text(text))
        #expect(try await socket.receive() == .text(text))
        let bytes = ByteBuffer(bytes: (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await socket.send(.binary(bytes))
        #expect(try await socket.receive() == .binary(bytes))
        #expect(try await socket.ping() > .zero)
        try await socket.send(.text("close:4001:bye"))
        #expect(await receiveFailure(socket) == .closedByServer(code: 4001, reason: "bye"))
        await engine.shutdown()
    }

    @Test func thePythonClientTalksToTheTestServer() async throws {
        try await TestServer.withRunning { server in
            let url = try #require(URL(string: "ws://127.0.0.1:\(server.port)/ws/echo"))
            let (status, output) = try PythonWebSocketPeer.runClient(url)
            #expect(status == 0, "\(output)")
            #expect(output.hasPrefix("ok") && output.contains("permessage-deflate"), "\(output)")
            #expect(server.webSocketClosesReceived == [1000])
        }
    }
}
