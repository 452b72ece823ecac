import CourierEngine
import CourierTestServer
import Foundation
import Synchronization
import Testing

@testable import Courier

/// The adapter between ``SecurityPolicy`` and the engine's TLS hook: direct calls, then real
/// HTTPS requests through ``HTTPEngine`` to the test server.
@Suite("SecurityPolicyTrustVerifier")
struct SecurityPolicyTrustVerifierTests {
    let authority: TestCertificateAuthority
    let root: Courier.Certificate
    let intermediate: Courier.Certificate

    static let afnSentence =
        "The certificate for this server is invalid. You might be connecting to a server that is pretending to be “localhost” which could put your confidential information at risk."

    init() throws {
        authority = try TestCertificateAuthority.shared
        root = try Courier.Certificate(derEncoded: Data(authority.rootCertificateDER))
        intermediate = try Courier.Certificate(derEncoded: Data(authority.intermediateCertificateDER))
    }

    func verifier(_ policy: SecurityPolicy, extraRoots: [[UInt8]] = []) -> SecurityPolicyTrustVerifier {
        SecurityPolicyTrustVerifier(policy: { policy }, additionalTrustRootsDER: extraRoots)
    }

    // MARK: - Direct calls

    @Test func unparseableChainIsRejectedWithAFNSentenceFirst() async {
        let decision = await verifier(.default).verify(chain: [[0x30, 0x03, 0x01, 0x02]], host: "localhost")
        guard case .reject(let reason) = decision else {
            Issue.record("expected a rejection, got \(decision)")
            return
        }
        #expect(reason.hasPrefix("certificate #1 of the chain can't be parsed"))
        #expect(CourierError.serverTrustRejected(host: "localhost", reason: reason).description == Self.afnSentence + " Reason: " + reason)
    }

    @Test func extraRootsJoinTheSystemStoreOnlyWhenThePolicyHasNoRoots() async throws {
        let chain = authority.serverChain(.valid).certificatesDER
        // System store alone: the test CA is unknown.
        guard case .reject(let reason) = await verifier(.default).verify(chain: chain, host: "localhost") else {
            Issue.record("the system store trusted the test CA")
            return
        }
        #expect(reason.hasPrefix("chain does not lead to a trusted root"))
        #expect(reason.contains("the chain sent ends at CN=Courier Test Intermediate CA"))
        // Plus the engine's extra root.
        #expect(await verifier(.default, extraRoots: [authority.rootCertificateDER]).verify(chain: chain, host: "localhost") == .trust)
        // The policy's own roots replace both.
        var policy = SecurityPolicy.default
        let other = try TestCertificateAuthority.generate()
        policy.trustedRootCertificates = [try Courier.Certificate(derEncoded: Data(other.rootCertificateDER))]
        let decision = await verifier(policy, extraRoots: [authority.rootCertificateDER]).verify(chain: chain, host: "localhost")
        guard case .reject(let otherReason) = decision else {
            Issue.record("trusted although the policy's only root is another authority's")
            return
        }
        #expect(otherReason.hasPrefix("chain does not lead to a trusted root"))
    }

    @Test func thePolicyIsReadAtEachVerification() async throws {
        let chain = authority.serverChain(.wrongHost).certificatesDER
        let current = LockedPolicy(.default)
        let adapter = SecurityPolicyTrustVerifier(policy: { current.value }, additionalTrustRootsDER: [authority.rootCertificateDER])
        guard case .reject = await adapter.verify(chain: chain, host: "localhost") else {
            Issue.record("wrong host accepted")
            return
        }
        var relaxed = SecurityPolicy.default
        relaxed.validatesDomainName = false
        current.value = relaxed
        #expect(await adapter.verify(chain: chain, host: "localhost") == .trust)
    }

    // MARK: - Through the engine

    /// Runs `body` with an HTTPS test server presenting `kind` and an engine whose TLS hook is the
    /// adapter for `policy` (the test root added to the system store).
    func withPinnedEngine(
        serving kind: ServerChainKind,
        policy: SecurityPolicy,
        _ body: (HTTPEngine, TestServer) async throws -> Void
    ) async throws {
        let server = try await TestServer.start(.init(tls: kind))
        var configuration = EngineConfiguration()
        configuration.tls.verifier = verifier(policy, extraRoots: [authority.rootCertificateDER])
        let engine: HTTPEngine
        do {
            engine = try HTTPEngine(configuration: configuration)
        } catch {
            try? await server.shutdown()
            throw error
        }
        do {
            try await body(engine, server)
        } catch {
            await engine.shutdown()
            try? await server.shutdown()
            throw error
        }
        await engine.shutdown()
        try await server.shutdown()
    }

    func localhostURL(_ server: TestServer) throws -> URL {
        try #require(URL(string: "https://localhost:\(server.port)/get"))
    }

    /// The engine error a request ends with, nil on success.
    func requestError(_ engine: HTTPEngine, _ url: URL) async -> EngineError? {
        do {
            _ = try await engine.collect(EngineRequest(url: url))
            return nil
        } catch {
            return error
        }
    }

    @Test func acceptsWithCertificatePin() async throws {
        let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate])
        try await withPinnedEngine(serving: .valid, policy: policy) { engine, server in
            let response = try await engine.collect(EngineRequest(url: try localhostURL(server)))
            #expect(response.head.status == .ok)
        }
    }

    @Test func acceptsWithPublicKeyPinOnTheUnsentRoot() async throws {
        let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [root])
        try await withPinnedEngine(serving: .valid, policy: policy) { engine, server in
            // By IP literal: the certificate names 127.0.0.1 as an IP address.
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/get"))
            let response = try await engine.collect(EngineRequest(url: url))
            #expect(response.head.status == .ok)
        }
    }

    @Test func rejectsWrongPinWithTheReason() async throws {
        let other = try TestCertificateAuthority.generate()
        let otherRoot = try Courier.Certificate(derEncoded: Data(other.rootCertificateDER))
        let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [otherRoot])
        try await withPinnedEngine(serving: .valid, policy: policy) { engine, server in
            let error = await requestError(engine, try localhostURL(server))
            guard case .serverTrustRejected(let host, let reason, _) = error else {
                Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                return
            }
            #expect(host == "localhost")
            #expect(reason == "no certificate in the chain matches a pinned certificate")
            // And as the Courier error the session layer will surface.
            guard case .serverTrustRejected(_, let courierReason, _, _) = CourierError(.serverTrustRejected(host: host, reason: reason))
            else {
                Issue.record("not mapped to CourierError.serverTrustRejected")
                return
            }
            #expect(courierReason == reason)
            #expect(CourierError.serverTrustRejected(host: host, reason: reason).description == Self.afnSentence + " Reason: " + reason)
        }
    }

    @Test func rejectsWrongPublicKeyPin() async throws {
        let other = try TestCertificateAuthority.generate()
        let otherLeaf = try Courier.Certificate(derEncoded: Data(other.serverChain(.valid).certificatesDER[0]))
        let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [otherLeaf])
        try await withPinnedEngine(serving: .valid, policy: policy) { engine, server in
            let error = await requestError(engine, try localhostURL(server))
            guard case .serverTrustRejected(_, let reason, _) = error else {
                Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                return
            }
            #expect(reason.hasSuffix("no public key in the chain matches a pinned key"))
        }
    }

    @Test func rejectsWrongHost() async throws {
        try await withPinnedEngine(serving: .wrongHost, policy: .default) { engine, server in
            let error = await requestError(engine, try localhostURL(server))
            guard case .serverTrustRejected(let host, let reason, _) = error else {
                Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                return
            }
            #expect(host == "localhost")
            #expect(reason.hasPrefix("host name does not match"))
        }
    }

    @Test func acceptsWrongHostWithoutDomainValidation() async throws {
        var policy = SecurityPolicy.default
        policy.validatesDomainName = false
        try await withPinnedEngine(serving: .wrongHost, policy: policy) { engine, server in
            let response = try await engine.collect(EngineRequest(url: try localhostURL(server)))
            #expect(response.head.status == .ok)
        }
    }

    @Test func acceptsPinnedSelfSignedServer() async throws {
        let selfSigned = try Courier.Certificate(derEncoded: Data(authority.serverChain(.selfSigned).certificatesDER[0]))
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [selfSigned])
        policy.allowInvalidCertificates = true
        try await withPinnedEngine(serving: .selfSigned, policy: policy) { engine, server in
            let response = try await engine.collect(EngineRequest(url: try localhostURL(server)))
            #expect(response.head.status == .ok)
        }
    }

    @Test func rejectsExpiredServer() async throws {
        try await withPinnedEngine(serving: .expired, policy: .default) { engine, server in
            let error = await requestError(engine, try localhostURL(server))
            guard case .serverTrustRejected(_, let reason, _) = error else {
                Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                return
            }
            #expect(reason.hasPrefix("certificate has expired"))
        }
    }
}

/// A policy a test can swap while an adapter holds the closure that reads it.
final class LockedPolicy: Sendable {
    private let storage: Mutex<SecurityPolicy>

    init(_ policy: SecurityPolicy) { storage = Mutex(policy) }

    var value: SecurityPolicy {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
