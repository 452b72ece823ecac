import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import NIOPosix
import Testing

/// A request's deadline bounds the wait for its connection, not only the exchange on it: a
/// server or proxy that accepts the TCP connection and never answers ends the request at its
/// deadline (well before the 30 s connect timeout), with ``EngineError/timedOut(_:)``
/// `.deadline` and metrics that say which step of the setup it was in.
@Suite("HTTPEngine deadline during connection setup")
struct EngineDeadlineDuringSetupTests {
    /// A listener that accepts and never sends a byte.
    static func silentListener() async throws -> (any Channel, Int) {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return (listener, try #require(listener.localAddress?.port))
    }

    /// The terminal event of `request`: its error and metrics, or nil when it succeeded.
    static func failure(of request: EngineRequest, on engine: HTTPEngine) async -> (EngineError, EngineMetrics)? {
        await withCheckedContinuation { continuation in
            engine.execute(request) { event in
                switch event {
                case .failed(let error, let metrics): continuation.resume(returning: (error, metrics))
                case .finished: continuation.resume(returning: nil)
                default: break
                }
            }
        }
    }

    @Test(arguments: [EngineConfiguration.HTTPVersionPolicy.automatic, .http1Only])
    func aSilentTLSServerEndsAtTheDeadlineDuringTheHandshake(_ policy: EngineConfiguration.HTTPVersionPolicy) async throws {
        let (listener, port) = try await Self.silentListener()
        var configuration = EngineConfiguration()
        configuration.httpVersion = policy  // the connect timeout stays 30 s
        let engine = try HTTPEngine(configuration: configuration)
        let url = try #require(URL(string: "https://127.0.0.1:\(port)/"))
        let started = ContinuousClock.now
        // Seconds, not milliseconds: the step named must be the handshake even when a loaded
        // machine takes a while to resolve and connect.
        let ended = await Self.failure(of: EngineRequest(url: url, deadline: .now() + .seconds(3)), on: engine)
        #expect(ContinuousClock.now - started < .seconds(20), "ended by the deadline, not the 30 s connect timeout")
        #expect(ended?.0 == .timedOut(.deadline))
        #expect(ended?.1.connectionSetupPhase == .tlsHandshake)
        await engine.shutdown()
        try await listener.close()
    }

    struct ProxyCase: Sendable, CustomTestStringConvertible {
        let kind: EngineProxy.Kind
        let scheme: String
        let policy: EngineConfiguration.HTTPVersionPolicy
        var testDescription: String { "\(kind) proxy, \(scheme), \(policy)" }
    }

    @Test(arguments: [
        ProxyCase(kind: .http, scheme: "https", policy: .http1Only),
        ProxyCase(kind: .http, scheme: "https", policy: .automatic),
        ProxyCase(kind: .socks5h, scheme: "http", policy: .http1Only),
        ProxyCase(kind: .socks5, scheme: "https", policy: .automatic),
    ])
    func aSilentProxyEndsAtTheDeadlineDuringItsHandshake(_ testCase: ProxyCase) async throws {
        let (silentProxy, port) = try await Self.silentListener()
        var configuration = EngineConfiguration()
        configuration.httpVersion = testCase.policy
        configuration.proxy = EngineProxy(host: "127.0.0.1", port: port, kind: testCase.kind)
        let engine = try HTTPEngine(configuration: configuration)
        let url = try #require(URL(string: "\(testCase.scheme)://127.0.0.1:9/get"))
        let started = ContinuousClock.now
        // Seconds, not milliseconds: the step named must be the handshake even when a loaded
        // machine takes a while to resolve and connect.
        let ended = await Self.failure(of: EngineRequest(url: url, deadline: .now() + .seconds(3)), on: engine)
        #expect(ContinuousClock.now - started < .seconds(20), "ended by the deadline, not the 30 s connect timeout")
        #expect(ended?.0 == .timedOut(.deadline))
        #expect(ended?.1.connectionSetupPhase == .proxyHandshake)
        await engine.shutdown()
        try await silentProxy.close()
    }

    /// The setup opened for a request with a short deadline ends with it; another request that
    /// waited for the same connection keeps its own, later deadline (it waits on for a new
    /// connection), instead of failing with the first one's timeout.
    @Test func aWaiterWithALaterDeadlineKeepsItsOwn() async throws {
        let (listener, port) = try await Self.silentListener()
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = 1
        configuration.httpVersion = .http1Only
        let engine = try HTTPEngine(configuration: configuration)
        let url = try #require(URL(string: "https://127.0.0.1:\(port)/"))
        let started = ContinuousClock.now
        async let short = Self.failure(of: EngineRequest(url: url, deadline: .now() + .milliseconds(300)), on: engine)
        try await Task.sleep(for: .milliseconds(50))
        let long = await Self.failure(of: EngineRequest(url: url, deadline: .now() + .milliseconds(1500)), on: engine)
        let elapsed = ContinuousClock.now - started
        #expect(await short?.0 == .timedOut(.deadline))
        #expect(long?.0 == .timedOut(.deadline), "its own deadline, not the first request's cut-short connect")
        #expect(elapsed >= .milliseconds(1400) && elapsed < .seconds(10))
        await engine.shutdown()
        try await listener.close()
    }

    /// A request queued behind a busy connection ends at its deadline while it waits.
    @Test func aRequestWaitingForABusyConnectionEndsAtItsDeadline() async throws {
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = 1
        configuration.httpVersion = .http1Only
        try await withEngine(engine: configuration) { engine, server in
            let busy = Task { try await engine.collect(EngineRequest(url: server.url("/delay/8"))) }
            try await Task.sleep(for: .milliseconds(300))
            let started = ContinuousClock.now
            let ended = await Self.failure(of: EngineRequest(url: server.url("/get"), deadline: .now() + .milliseconds(300)), on: engine)
            #expect(ContinuousClock.now - started < .seconds(5), "ended while waiting, not after the busy request")
            #expect(ended?.0 == .timedOut(.deadline))
            #expect(ended?.1.connectionSetupPhase == nil, "it waited for a connection that was open")
            busy.cancel()
            _ = await busy.result
        }
    }
}
