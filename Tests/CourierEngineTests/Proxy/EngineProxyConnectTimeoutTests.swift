import CourierEngine
import Foundation
import NIOCore
import NIOPosix
import Testing

/// A proxy that accepts the connection and never answers its handshake (`CONNECT` or SOCKS5):
/// only the connect deadline can end the request, and that is what the caller is told, on
/// either connect path (HTTP/1.1 only, or negotiating HTTP/2). Closing the timed-out channel
/// makes the proxy's handshake handler record "closed before the tunnel was up"; the deadline
/// records its own error first, so that one is not what the caller gets.
@Suite("HTTPEngine connect timeout while a proxy says nothing")
struct EngineProxyConnectTimeoutTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let kind: EngineProxy.Kind
        let scheme: String
        let policy: EngineConfiguration.HTTPVersionPolicy
        var testDescription: String { "\(kind) proxy, \(scheme), \(policy)" }
    }

    @Test(arguments: [
        Case(kind: .http, scheme: "https", policy: .http1Only),
        Case(kind: .http, scheme: "https", policy: .automatic),
        Case(kind: .socks5h, scheme: "http", policy: .http1Only),
        Case(kind: .socks5h, scheme: "https", policy: .automatic),
    ])
    func aSilentProxyIsAConnectTimeout(_ testCase: Case) async throws {
        let silentProxy = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = try #require(silentProxy.localAddress?.port)
        var configuration = EngineConfiguration()
        configuration.connectTimeout = .milliseconds(300)
        configuration.httpVersion = testCase.policy
        configuration.proxy = EngineProxy(host: "127.0.0.1", port: port, kind: testCase.kind)
        let engine = try HTTPEngine(configuration: configuration)
        let url = try #require(URL(string: "\(testCase.scheme)://localhost:9/get"))
        let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
        #expect(error == .timedOut(.connect))
        await engine.shutdown()
        try await silentProxy.close()
    }
}
