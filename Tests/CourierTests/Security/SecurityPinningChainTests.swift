import CourierTestServer
import Foundation
import Testing

@testable import Courier

/// Pins match only the chain that was validated (leaf to trust anchor), never a certificate a
/// server merely sent; with `allowInvalidCertificates` (no validated chain), only certificates
/// linked to the leaf by issuer name and signature. Plain policy evaluations at the test
/// authority's `generatedAt`.
@Suite("Security: pins match only the validated chain")
struct SecurityPinningChainTests {
    /// The genuine site: its chain, root, intermediate and leaf.
    let victim: TestCertificateAuthority
    /// Another authority, also trusted, that issued the attacker a valid `localhost` certificate.
    let attacker: TestCertificateAuthority
    let now: Date

    init() throws {
        victim = try TestCertificateAuthority.shared
        now = victim.generatedAt
        attacker = try TestCertificateAuthority.generate(now: now)
    }

    static func certificates(_ der: [[UInt8]]) throws -> [Courier.Certificate] {
        try der.map { try Courier.Certificate(derEncoded: Data($0)) }
    }

    var victimLeaf: Courier.Certificate {
        get throws { try Self.certificates([victim.serverChain(.valid).certificatesDER[0]])[0] }
    }

    var victimIntermediate: Courier.Certificate {
        get throws { try Courier.Certificate(derEncoded: Data(victim.intermediateCertificateDER)) }
    }

    /// A policy trusting both authorities' roots (any public CA could have issued the attacker's
    /// certificate).
    func policy(_ mode: SSLPinningMode, pinning pinned: Set<Courier.Certificate>) throws -> SecurityPolicy {
        var policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: pinned)
        policy.trustedRootCertificates = try Self.certificates([victim.rootCertificateDER, attacker.rootCertificateDER])
        return policy
    }

    /// The attacker's valid chain for `localhost`, with `extra` appended.
    func attackerChain(_ kind: ServerChainKind = .valid, appending extra: [[UInt8]]) throws -> [Courier.Certificate] {
        try Self.certificates(HostileCertificates.appending(extra, to: attacker.serverChain(kind)).certificatesDER)
    }

    func expectNoKeyMatch(_ evaluation: ServerTrustEvaluation, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            evaluation == .rejected(reason: "no public key in the chain matches a pinned key"),
            "\(evaluation)",
            sourceLocation: sourceLocation
        )
    }

    @Test func publicKeyPinIgnoresVictimCertificatesAppendedToAValidChain() async throws {
        let victimChain = victim.serverChain(.valid).certificatesDER
        // The genuine chain passes with either pin.
        for pinned in [try victimLeaf, try victimIntermediate] {
            let genuine = try await policy(.publicKey, pinning: [pinned])
                .evaluation(serverChain: Self.certificates(victimChain), forDomain: "localhost", at: now)
            #expect(genuine == .trusted, "genuine chain, pin \(pinned.subjectSummary)")
        }
        // The attacker's valid chain with the victim's leaf, or its whole chain, appended does not.
        for extra in [[victimChain[0]], victimChain, [victimChain[1]]] {
            let hostile = try attackerChain(appending: extra)
            for pinned in [try victimLeaf, try victimIntermediate] {
                let evaluation = try await policy(.publicKey, pinning: [pinned])
                    .evaluation(serverChain: hostile, forDomain: "localhost", at: now)
                expectNoKeyMatch(evaluation)
            }
        }
    }

    /// Certificate mode already re-anchored on the pins; kept as a guard for both modes.
    @Test func certificatePinIgnoresVictimCertificatesAppendedToAValidChain() async throws {
        let victimChain = victim.serverChain(.valid).certificatesDER
        let hostile = try attackerChain(appending: victimChain)
        for pinned in [try victimLeaf, try victimIntermediate] {
            let evaluation = try await policy(.certificate, pinning: [pinned])
                .evaluation(serverChain: hostile, forDomain: "localhost", at: now)
            #expect(evaluation == .rejected(reason: "no certificate in the chain matches a pinned certificate"))
        }
    }

    @Test func allowInvalidPublicKeyPinIgnoresCertificatesAppendedToASelfSignedLeaf() async throws {
        let victimChain = victim.serverChain(.valid).certificatesDER
        let hostile = try attackerChain(.selfSigned, appending: victimChain)
        for validatesDomainName in [true, false] {
            for pinned in [try victimLeaf, try victimIntermediate] {
                var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [pinned])
                policy.allowInvalidCertificates = true
                policy.validatesDomainName = validatesDomainName
                expectNoKeyMatch(await policy.evaluation(serverChain: hostile, forDomain: "localhost", at: now))
                expectNoKeyMatch(await policy.evaluation(serverChain: hostile, forDomain: nil, at: now))
            }
        }
    }

    @Test func allowInvalidPublicKeyPinNeedsTheIssuersSignatureNotJustItsName() async throws {
        // [forged leaf naming the victim's intermediate as issuer, the victim's intermediate].
        let forged = try HostileCertificates.leafClaimingIssuer(victim.intermediateCertificateDER, now: now)
        let hostile = try Self.certificates(forged.certificatesDER)
        #expect(hostile[0].issuerSummary == (try victimIntermediate).subjectSummary)
        var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try victimIntermediate])
        policy.allowInvalidCertificates = true
        expectNoKeyMatch(await policy.evaluation(serverChain: hostile, forDomain: "localhost", at: now))
    }

    // MARK: - The linkage itself (plain values)

    @Test func linkageFollowsSignaturesAndSkipsEverythingElse() throws {
        let genuine = try Self.certificates(victim.serverChain(.valid).certificatesDER)
        let stranger = try Self.certificates(attacker.serverChain(.valid).certificatesDER)
        #expect(PresentedChainLinkage.linkedChain([]) == [])
        #expect(PresentedChainLinkage.linkedChain(genuine) == genuine)
        // Out of order, with strangers in between: still the leaf and its issuer, nothing else.
        let shuffled = [genuine[0], stranger[1], stranger[0], genuine[1], genuine[0]]
        #expect(PresentedChainLinkage.linkedChain(shuffled) == genuine)
        // An attacker's leaf followed by the victim's chain: the attacker's path only.
        #expect(PresentedChainLinkage.linkedChain(stranger + genuine) == stranger)
        // A name that matches without the signature is not a link.
        let forged = try Self.certificates(HostileCertificates.leafClaimingIssuer(victim.intermediateCertificateDER, now: now).certificatesDER)
        #expect(PresentedChainLinkage.linkedChain(forged) == [forged[0]])
    }

    /// The chain linked from the leaf still counts when nothing validates: an expired chain, sent
    /// out of order with an unrelated certificate in between, pinned on its intermediate.
    @Test func allowInvalidPublicKeyPinMatchesTheChainLinkedFromTheLeaf() async throws {
        let expired = victim.serverChain(.expired).certificatesDER
        let unrelated = attacker.serverChain(.selfSigned).certificatesDER[0]
        let sent = try Self.certificates([expired[0], unrelated, expired[1]])
        var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try victimIntermediate])
        policy.allowInvalidCertificates = true
        #expect(await policy.evaluation(serverChain: sent, forDomain: "localhost", at: now) == .trusted)
        // But not on the unrelated one.
        policy.pinnedCertificates = try Set(Self.certificates([unrelated]))
        expectNoKeyMatch(await policy.evaluation(serverChain: sent, forDomain: "localhost", at: now))
    }
}
