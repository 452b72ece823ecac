import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Synchronization
import Testing

/// Records the chains it sees and answers with a fixed decision.
final class RecordingVerifier: ServerTrustVerifier {
    let decision: ServerTrustDecision
    private let seen = Mutex<[(chain: [[UInt8]], host: String)]>([])

    init(_ decision: ServerTrustDecision) { self.decision = decision }

    func verify(chain: [[UInt8]], host: String) async -> ServerTrustDecision {
        seen.withLock { $0.append((chain, host)) }
        return decision
    }

    var calls: [(chain: [[UInt8]], host: String)] { seen.withLock { $0 } }
}

@Suite("HTTPEngine TLS")
struct EngineTLSTests {
    private func trusting(_ authority: TestCertificateAuthority) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [authority.rootCertificateDER]
        return configuration
    }

    @Test func acceptsChainFromTrustedTestCA() async throws {
        let authority = try TestCertificateAuthority.shared
        try await withEngine(server: .init(tls: .valid), engine: trusting(authority)) { engine, server in
            let url = URL(string: "https://localhost:\(server.port)/get")!
            let response = try await engine.collect(EngineRequest(url: url))
            #expect(response.head.status == .ok)
            let metrics = response.metrics
            #expect(metrics.secureConnectionStart != nil)
            #expect(metrics.secureConnectionEnd != nil)
            #expect(metrics.tlsProtocolVersion == "TLSv1.3")
            // The IP literal works too (no SNI; the certificate names 127.0.0.1).
            let byIP = try await engine.collect(EngineRequest(url: server.url("/get")))
            #expect(byIP.head.status == .ok)
        }
    }

    @Test(arguments: [ServerChainKind.wrongHost, .expired, .notYetValid, .selfSigned])
    func rejectsBadChains(kind: ServerChainKind) async throws {
        let authority = try TestCertificateAuthority.shared
        try await withEngine(server: .init(tls: kind), engine: trusting(authority)) { engine, server in
            let url = URL(string: "https://localhost:\(server.port)/get")!
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            guard case .serverTrustRejected(let host, _, _) = error else {
                Issue.record("\(kind): expected serverTrustRejected, got \(String(describing: error))")
                return
            }
            #expect(host == "localhost")
        }
    }

    @Test func untrustedCAIsRejectedBySystemRoots() async throws {
        try await withEngine(server: .init(tls: .valid)) { engine, server in
            let url = URL(string: "https://localhost:\(server.port)/get")!
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            guard case .serverTrustRejected = error else {
                Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func verifierSeesTheChainAndCanReject() async throws {
        let authority = try TestCertificateAuthority.shared
        let rejecting = RecordingVerifier(.reject(reason: "pin mismatch"))
        var configuration = EngineConfiguration()
        configuration.tls.verifier = rejecting
        try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
            let url = URL(string: "https://localhost:\(server.port)/get")!
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            guard case .serverTrustRejected("localhost", "pin mismatch", let chain) = error else {
                Issue.record("expected the pin rejection, got \(String(describing: error))")
                return
            }
            #expect(chain == authority.serverChain(.valid).certificatesDER)
            let call = try #require(rejecting.calls.first)
            #expect(call.host == "localhost")
            #expect(call.chain == authority.serverChain(.valid).certificatesDER)
        }
    }

    @Test func verifierCanTrustWhatSystemRootsWouldNot() async throws {
        let trusting = RecordingVerifier(.trust)
        var configuration = EngineConfiguration()
        configuration.tls.verifier = trusting
        try await withEngine(server: .init(tls: .selfSigned), engine: configuration) { engine, server in
            let url = URL(string: "https://localhost:\(server.port)/get")!
            let response = try await engine.collect(EngineRequest(url: url))
            #expect(response.head.status == .ok)
            #expect(trusting.calls.count == 1)
            // Reuse: a second request doesn't handshake again.
            _ = try await engine.collect(EngineRequest(url: url))
            #expect(trusting.calls.count == 1)
        }
    }

    @Test func mutualTLS() async throws {
        let authority = try TestCertificateAuthority.shared
        let serverConfiguration = TestServer.Configuration(tls: .valid, requireClientCertificate: true)
        try await withEngine(server: serverConfiguration, engine: trusting(authority)) { engine, server in
            let url = URL(string: "https://localhost:\(server.port)/get")!
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
            #expect(error != nil)
            var withIdentity = trusting(authority)
            let identity = authority.clientIdentity
            withIdentity.tls.clientIdentity = .init(
                certificateChainDER: identity.certificatesDER,
                privateKeyDER: identity.privateKeyDER
            )
            let clientEngine = try HTTPEngine(configuration: withIdentity)
            let response = try await clientEngine.collect(EngineRequest(url: url))
            #expect(response.head.status == .ok)
            await clientEngine.shutdown()
        }
    }
}
