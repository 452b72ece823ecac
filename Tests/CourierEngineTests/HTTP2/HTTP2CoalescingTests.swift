@testable import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// HTTP/2 connection coalescing against the test server over TLS: a request to another name
/// of the same server rides the open connection when the name resolves to its address and
/// the verifier trusts its chain for that name; otherwise it gets a connection of its own.
@Suite("HTTP/2 connection coalescing")
struct HTTP2CoalescingTests {
    /// Trusts the chain for the names it was given, and records every name it was asked about.
    final class NameVerifier: ServerTrustVerifier {
        let trusted: Set<String>
        let asked = Mutex<[String]>([])

        init(trusting trusted: Set<String>) { self.trusted = trusted }

        func verify(chain: [[UInt8]], host: String) async -> ServerTrustDecision {
            asked.withLock { $0.append(host) }
            return trusted.contains(host) ? .trust : .reject(reason: "\(host) is not trusted here")
        }
    }

    private static func configuration(
        _ verifier: NameVerifier, _ change: (inout EngineConfiguration) -> Void = { _ in }
    ) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.tls.verifier = verifier
        configuration.resolveOverride = { host, port in
            switch host {
            case "a.test", "b.test", "localhost": [try? SocketAddress(ipAddress: "127.0.0.1", port: port)].compactMap { $0 }
            default: [try? SocketAddress(ipAddress: "::1", port: port)].compactMap { $0 }
            }
        }
        change(&configuration)
        return configuration
    }

    private static func url(_ host: String, _ server: TestServer, _ path: String = "/get") throws -> URL {
        try #require(URL(string: "https://\(host):\(server.port)\(path)"))
    }

    @Test func anotherNameOfTheServerRidesTheOpenConnection() async throws {
        let verifier = NameVerifier(trusting: ["a.test", "b.test"])
        try await withEngine(server: .init(tls: .valid), engine: Self.configuration(verifier)) { engine, server in
            let first = try await engine.collect(EngineRequest(url: try Self.url("a.test", server)))
            #expect(first.metrics.networkProtocolName == "h2")
            #expect(first.metrics.coalescedConnectionHost == nil)

            let second = try await engine.collect(EngineRequest(url: try Self.url("b.test", server)))
            #expect(second.head.status == .ok)
            #expect(engine.openConnectionCount == 1, "b.test rode a.test's connection")
            #expect(second.metrics.coalescedConnectionHost == "a.test")
            #expect(second.metrics.isReusedConnection)
            #expect(second.text.contains("b.test:\(server.port)"), "the request still names its own host")
            #expect(verifier.asked.withLock { $0 } == ["a.test", "b.test"], "the chain was judged for b.test")

            // Its next requests go straight to that connection: no second judgement.
            let third = try await engine.collect(EngineRequest(url: try Self.url("b.test", server)))
            #expect(third.metrics.coalescedConnectionHost == "a.test")
            #expect(verifier.asked.withLock { $0.count } == 2)
            #expect(engine.openConnectionCount == 1)
        }
    }

    @Test func aNameTheChainIsNotTrustedForGetsItsOwnConnection() async throws {
        // The verifier stands for the certificate check and pinning: it refuses b.test on a.test's
        // chain, and b.test's own connection is refused in its handshake too.
        let verifier = NameVerifier(trusting: ["a.test"])
        try await withEngine(server: .init(tls: .valid), engine: Self.configuration(verifier)) { engine, server in
            _ = try await engine.collect(EngineRequest(url: try Self.url("a.test", server)))
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: try Self.url("b.test", server))) }
            guard case .serverTrustRejected(let host, _, _) = error else {
                Issue.record("expected b.test's own handshake to be refused, got \(String(describing: error))")
                return
            }
            #expect(host == "b.test")
            #expect(verifier.asked.withLock { $0 } == ["a.test", "b.test", "b.test"], "judged on a.test's chain, then on its own")
        }
    }

    @Test func aNameAtAnotherAddressGetsItsOwnConnection() async throws {
        let verifier = NameVerifier(trusting: ["a.test", "far.test"])
        try await withEngine(server: .init(tls: .valid), engine: Self.configuration(verifier)) { engine, server in
            _ = try await engine.collect(EngineRequest(url: try Self.url("a.test", server)))
            // far.test resolves to ::1, where nothing listens: it never rides a.test's connection.
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: try Self.url("far.test", server))) }
            guard case .cannotConnect = error else {
                Issue.record("expected far.test to connect on its own (and fail), got \(String(describing: error))")
                return
            }
            #expect(!verifier.asked.withLock { $0 }.contains("far.test"), "no chain judged for an address that differs")
        }
    }

    @Test func switchedOffEachNameHasItsConnection() async throws {
        let verifier = NameVerifier(trusting: ["a.test", "b.test"])
        let configuration = Self.configuration(verifier) { $0.coalescesHTTP2Connections = false }
        try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
            _ = try await engine.collect(EngineRequest(url: try Self.url("a.test", server)))
            let second = try await engine.collect(EngineRequest(url: try Self.url("b.test", server)))
            #expect(second.metrics.coalescedConnectionHost == nil)
            #expect(engine.openConnectionCount == 2)
        }
    }

    @Test func a421SendsTheRequestAgainOnItsOwnConnection() async throws {
        let verifier = NameVerifier(trusting: ["a.test", "b.test"])
        try await withEngine(server: .init(tls: .valid), engine: Self.configuration(verifier)) { engine, server in
            _ = try await engine.collect(EngineRequest(url: try Self.url("a.test", server)))
            let misdirected = try await engine.collect(EngineRequest(url: try Self.url("b.test", server, "/status/421")))
            // The server answers 421 on b.test's own connection too: that answer is the response.
            #expect(misdirected.head.status == .misdirectedRequest)
            #expect(misdirected.metrics.coalescedConnectionHost == nil)
            #expect(engine.openConnectionCount == 2)
            let later = try await engine.collect(EngineRequest(url: try Self.url("b.test", server)))
            #expect(later.metrics.coalescedConnectionHost == nil, "b.test keeps to its own connection from then on")
            #expect(engine.openConnectionCount == 2)
        }
    }
}
