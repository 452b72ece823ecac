import CourierEngine
import Foundation
import NIOCore
import NIOPosix
import Testing

/// A TCP listener that accepts and then says nothing: a TLS handshake against it never
/// completes, so only the connect timeout can end the request.
@Suite("HTTPEngine connect timeout")
struct EngineConnectTimeoutTests {
    @Test func silentServerTimesOutDuringTLSHandshake() async throws {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = try #require(listener.localAddress?.port)
        var configuration = EngineConfiguration()
        configuration.connectTimeout = .milliseconds(300)
        let engine = try HTTPEngine(configuration: configuration)
        let error = await engineError {
            _ = try await engine.collect(EngineRequest(url: URL(string: "https://127.0.0.1:\(port)/")!))
        }
        #expect(error == .timedOut(.connect))
        #expect(engine.openConnectionCount == 0)
        await engine.shutdown()
        try await listener.close()
    }
}
