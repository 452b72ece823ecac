import Courier
import CourierEngine
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

/// HTTP/2 connection coalescing through a session: another name of the server rides the open
/// connection when the session's security policy (pinning included) trusts its certificate
/// for that name too.
@Suite("Session HTTP/2 coalescing")
struct SessionCoalescingTests {
    private static func metrics(_ manager: URLSessionManager, _ url: String) async throws -> EngineMetrics {
        let request = HTTPRequest(method: .get, url: try #require(URL(string: url)))
        let response = try await manager.response(for: request)
        #expect(response.status == .ok)
        return try #require(response.metrics)
    }

    @Test(arguments: [true, false])
    func anotherNameOfTheServerRidesTheConnectionUnderAPinnedPolicy(coalesces: Bool) async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionSecurityTests.trustingTestCA
            configuration.coalescesHTTP2Connections = coalesces
            let manager = URLSessionManager(configuration: configuration)
            let leaf = try SessionSecurityTests.certificate(
                try #require(try SessionSecurityTests.authority.serverChain(.valid).certificatesDER.first))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [leaf]))
            let first = try await Self.metrics(manager, "https://localhost:\(server.port)/get")
            #expect(first.networkProtocolName == "h2")
            // 127.0.0.1 is the address localhost's connection went to, and the certificate
            // names it: the request rides that connection.
            let second = try await Self.metrics(manager, "https://127.0.0.1:\(server.port)/get")
            #expect(second.coalescedConnectionHost == (coalesces ? "localhost" : nil))
            #expect(second.isReusedConnection == coalesces)
            manager.invalidateSessionCancelingTasks(true, resetSession: false)
        }
    }

    @Test func aPinThatFailsForTheOtherNameKeepsItApart() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let manager = URLSessionManager(configuration: SessionSecurityTests.trustingTestCA)
            // The policy judges each host: localhost passes, 127.0.0.1 is refused by the block.
            manager.setServerTrustChallengeBlock { challenge in
                challenge.host == "localhost" ? .performDefaultHandling : .reject(reason: "not this name")
            }
            _ = try await Self.metrics(manager, "https://localhost:\(server.port)/get")
            await #expect(throws: CourierError.self) {
                _ = try await Self.metrics(manager, "https://127.0.0.1:\(server.port)/get")
            }
            manager.invalidateSessionCancelingTasks(true, resetSession: false)
        }
    }
}
