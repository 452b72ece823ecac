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

/// A verifier that answers only after `delay`: the handshake waits for it.
private struct SlowVerifier: ServerTrustVerifier {
    let delay: Duration

    func verify(chain: [[UInt8]], host: String) async -> ServerTrustDecision {
        try? await Task.sleep(for: delay)
        return .trust
    }
}

@Suite("HTTPEngine connect timeout while the chain is judged")
struct EngineVerifierTimeoutTests {
    /// The connect deadline covers the handshake, the verifier's time included; running out of
    /// it is a connect timeout, not "the connection closed during setup" (which is what closing
    /// the timed-out channel used to leave behind as the setup error).
    @Test(arguments: [EngineConfiguration.HTTPVersionPolicy.automatic, .http1Only])
    func aVerifierSlowerThanTheConnectTimeoutIsAConnectTimeout(_ policy: EngineConfiguration.HTTPVersionPolicy) async throws {
        var configuration = EngineConfiguration()
        configuration.connectTimeout = .milliseconds(300)
        configuration.httpVersion = policy
        configuration.tls.verifier = SlowVerifier(delay: .seconds(5))
        try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
            let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            #expect(error == .timedOut(.connect))
        }
    }
}
