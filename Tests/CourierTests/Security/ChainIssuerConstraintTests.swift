import CourierTestServer
import Foundation
import Testing

@testable import Courier

/// RFC 5280 6.1.4 (k): a certificate that issues another one in the path must be a version 3
/// certificate whose basic constraints say `cA` true. X.509 version 1 certificates carry no
/// extensions, so they can't; only ``SecurityPolicy/allowsLegacyV1Issuers`` lets them. Trust
/// anchors the caller configures (trusted roots, certificate pins) are trusted as given, per
/// RFC 5280 6.1.1 (d), so a version 1 root still anchors. Plain policy evaluations.
@Suite("Chain: issuers must be CAs")
struct ChainIssuerConstraintTests {
    let now = Date()

    static func certificate(_ der: [UInt8]) throws -> Courier.Certificate {
        try Courier.Certificate(derEncoded: Data(der))
    }

    func trusting(_ hierarchy: HostileCertificates.LegacyHierarchy) throws -> SecurityPolicy {
        var policy = SecurityPolicy.default
        policy.trustedRootCertificates = [try Self.certificate(hierarchy.rootCertificateDER)]
        return policy
    }

    func sent(_ hierarchy: HostileCertificates.LegacyHierarchy) throws -> [Courier.Certificate] {
        try hierarchy.serverChain.certificatesDER.map(Self.certificate)
    }

    @Test func allVersion3HierarchyIsTrusted() async throws {
        let hierarchy = try HostileCertificates.hierarchy(version1: .none, now: now)
        let evaluation = try await trusting(hierarchy).evaluation(serverChain: sent(hierarchy), forDomain: "localhost", at: now)
        #expect(evaluation == .trusted)
    }

    @Test func version1IntermediateIsRefusedUnlessLegacyIssuersAreAllowed() async throws {
        let hierarchy = try HostileCertificates.hierarchy(version1: .intermediate, now: now)
        var policy = try trusting(hierarchy)
        #expect(policy.allowsLegacyV1Issuers == false)
        for domain in ["localhost", nil] {
            let evaluation = await policy.evaluation(serverChain: try sent(hierarchy), forDomain: domain, at: now)
            let reason = evaluation.rejectionReason ?? ""
            #expect(reason.hasPrefix("certificate chain is invalid: "), "\(evaluation)")
            #expect(reason.contains("Courier Legacy Intermediate"), "\(evaluation)")
            #expect(reason.contains("X.509 version 1"), "\(evaluation)")
            #expect(reason.contains("allowsLegacyV1Issuers"), "\(evaluation)")
        }
        policy.allowsLegacyV1Issuers = true
        #expect(await policy.evaluation(serverChain: try sent(hierarchy), forDomain: "localhost", at: now) == .trusted)
    }

    /// Every step that validates a chain applies the rule: public-key pinning (step 4) and
    /// certificate pinning anchored on the pinned root (step 5, even with invalid certificates
    /// allowed).
    @Test func version1IntermediateIsRefusedInBothPinningModes() async throws {
        let hierarchy = try HostileCertificates.hierarchy(version1: .intermediate, now: now)
        let root = try Self.certificate(hierarchy.rootCertificateDER)
        let leaf = try sent(hierarchy)[0]
        var publicKey = try trusting(hierarchy)
        publicKey.pinningMode = .publicKey
        publicKey.pinnedCertificates = [leaf]
        let keyEvaluation = await publicKey.evaluation(serverChain: try sent(hierarchy), forDomain: "localhost", at: now)
        #expect(keyEvaluation.rejectionReason?.contains("X.509 version 1") == true, "\(keyEvaluation)")

        var certificate = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [root])
        certificate.allowInvalidCertificates = true
        let pinEvaluation = await certificate.evaluation(serverChain: try sent(hierarchy), forDomain: "localhost", at: now)
        #expect(pinEvaluation.rejectionReason?.contains("X.509 version 1") == true, "\(pinEvaluation)")
        certificate.allowsLegacyV1Issuers = true
        #expect(await certificate.evaluation(serverChain: try sent(hierarchy), forDomain: "localhost", at: now) == .trusted)
    }

    /// A version 1 root the caller configured is an anchor, trusted as given (RFC 5280 6.1.1 d;
    /// OpenSSL and curl do the same for self-signed version 1 roots). So is a version 1
    /// intermediate the caller pins in certificate mode: the pin makes it the anchor.
    @Test func configuredVersion1AnchorsAreTrustedAsGiven() async throws {
        let legacyRoot = try HostileCertificates.hierarchy(version1: .root, now: now)
        let evaluation = try await trusting(legacyRoot).evaluation(serverChain: sent(legacyRoot), forDomain: "localhost", at: now)
        #expect(evaluation == .trusted)

        let legacyIntermediate = try HostileCertificates.hierarchy(version1: .intermediate, now: now)
        let intermediate = try Self.certificate(legacyIntermediate.intermediateCertificateDER)
        var pinned = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate])
        pinned.allowInvalidCertificates = true
        #expect(await pinned.evaluation(serverChain: try sent(legacyIntermediate), forDomain: "localhost", at: now) == .trusted)
    }
}
