import Crypto
import CourierTestServer
import Foundation
import SwiftASN1
import Testing
import X509

@testable import Courier

/// AFN's `evaluateServerTrust:forDomain:` table (AFNETWORKING.md §1.5), row by row, on the test
/// certificate authority's chains. Every evaluation runs at the authority's `generatedAt`, so
/// each chain kind means what it promises however long after generation the test runs.
@Suite("SecurityPolicy")
struct SecurityPolicyTests {
    let authority: TestCertificateAuthority
    let root: Courier.Certificate
    let intermediate: Courier.Certificate
    let now: Date

    init() throws {
        authority = try TestCertificateAuthority.shared
        root = try Courier.Certificate(derEncoded: Data(authority.rootCertificateDER))
        intermediate = try Courier.Certificate(derEncoded: Data(authority.intermediateCertificateDER))
        now = authority.generatedAt
    }

    func chain(_ kind: ServerChainKind) throws -> [Courier.Certificate] {
        try authority.serverChain(kind).certificatesDER.map { try Courier.Certificate(derEncoded: Data($0)) }
    }

    func leaf(_ kind: ServerChainKind) throws -> Courier.Certificate {
        guard let first = try chain(kind).first else { throw PolicyTestFailure("empty chain for \(kind)") }
        return first
    }

    /// A policy whose only trusted root is the test root.
    func trustingTestRoot(
        _ mode: SSLPinningMode = .none,
        pinning pinned: Set<Courier.Certificate> = []
    ) -> SecurityPolicy {
        var policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: pinned)
        policy.trustedRootCertificates = [root]
        return policy
    }

    func evaluate(
        _ policy: SecurityPolicy,
        _ kind: ServerChainKind,
        domain: String? = "localhost",
        at time: Date? = nil
    ) async throws -> ServerTrustEvaluation {
        await policy.evaluation(serverChain: try chain(kind), forDomain: domain, at: time ?? now)
    }

    /// Expects a rejection whose reason starts with `prefix`.
    func expectRejected(
        _ evaluation: ServerTrustEvaluation,
        startingWith prefix: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .rejected(let reason) = evaluation else {
            Issue.record("expected a rejection starting with “\(prefix)”, got \(evaluation)", sourceLocation: sourceLocation)
            return
        }
        #expect(reason.hasPrefix(prefix), "reason: \(reason)", sourceLocation: sourceLocation)
    }

    // MARK: - Defaults

    @Test func defaultsMatchAFN() {
        let policy = SecurityPolicy.default
        #expect(policy.pinningMode == .none)
        #expect(policy.pinnedCertificates.isEmpty)
        #expect(policy.allowInvalidCertificates == false)
        #expect(policy.validatesDomainName == true)
        #expect(policy.trustedRootCertificates == nil)
    }

    // MARK: - Mode none (steps 2 and 3)

    @Test func acceptsValidChainForNameAndIPLiterals() async throws {
        let policy = trustingTestRoot()
        for host in ["localhost", "LOCALHOST", "127.0.0.1", "::1", "[::1]"] {
            #expect(try await evaluate(policy, .valid, domain: host) == .trusted, "host \(host)")
        }
        #expect(try await policy.evaluate(serverChain: chain(.valid), forDomain: "localhost", at: now))
        #expect(try await evaluate(policy, .valid, domain: nil) == .trusted)
    }

    @Test func rejectsWrongHost() async throws {
        let policy = trustingTestRoot()
        expectRejected(try await evaluate(policy, .wrongHost), startingWith: "host name does not match")
        // The valid leaf names localhost and the loopback addresses, nothing else.
        expectRejected(try await evaluate(policy, .valid, domain: "example.com"), startingWith: "host name does not match")
        expectRejected(try await evaluate(policy, .valid, domain: "10.0.0.1"), startingWith: "host name does not match")
        #expect(try await policy.evaluate(serverChain: chain(.wrongHost), forDomain: "localhost", at: now) == false)
    }

    @Test func hostMismatchReasonNamesTheHostAndTheCertificateNames() async throws {
        let evaluation = try await evaluate(trustingTestRoot(), .wrongHost)
        let reason = try #require(evaluation.rejectionReason)
        #expect(reason.contains("“localhost”"))
        #expect(reason.contains("wrong.host.example"))
    }

    @Test func rejectsExpiredAndNotYetValid() async throws {
        let policy = trustingTestRoot()
        expectRejected(try await evaluate(policy, .expired), startingWith: "certificate has expired")
        expectRejected(try await evaluate(policy, .notYetValid), startingWith: "certificate is not yet valid")
    }

    @Test func injectedTimeDecidesExpiry() async throws {
        let policy = trustingTestRoot()
        let day: TimeInterval = 24 * 60 * 60
        // The valid leaf runs to now + 30 days; the expired one from now - 30 to now - 1 day.
        expectRejected(try await evaluate(policy, .valid, at: now + 31 * day), startingWith: "certificate has expired")
        expectRejected(try await evaluate(policy, .valid, at: now - 2 * day), startingWith: "certificate is not yet valid")
        #expect(try await evaluate(policy, .expired, at: now - 10 * day) == .trusted)
        #expect(try await evaluate(policy, .notYetValid, at: now + 10 * day) == .trusted)
    }

    @Test func rejectsSelfSignedChain() async throws {
        let evaluation = try await evaluate(trustingTestRoot(), .selfSigned)
        expectRejected(evaluation, startingWith: "chain does not lead to a trusted root")
        #expect(evaluation.rejectionReason?.hasSuffix("OU=selfSigned,O=Courier Test is self-signed)") == true)
    }

    @Test func systemStoreDoesNotTrustTheTestAuthority() async throws {
        expectRejected(try await evaluate(.default, .valid), startingWith: "chain does not lead to a trusted root")
    }

    @Test func trustedRootsReplaceTheSystemStore() async throws {
        let other = try TestCertificateAuthority.generate(now: now)
        var policy = SecurityPolicy.default
        policy.trustedRootCertificates = [try Courier.Certificate(derEncoded: Data(other.rootCertificateDER))]
        expectRejected(try await evaluate(policy, .valid), startingWith: "chain does not lead to a trusted root")
    }

    @Test func withoutDomainValidationAWrongHostPasses() async throws {
        var policy = trustingTestRoot()
        policy.validatesDomainName = false
        #expect(try await evaluate(policy, .wrongHost) == .trusted)
        // The chain is still checked.
        expectRejected(try await evaluate(policy, .expired), startingWith: "certificate has expired")
        expectRejected(try await evaluate(policy, .selfSigned), startingWith: "chain does not lead to a trusted root")
    }

    @Test func rejectsAnEmptyChain() async {
        let evaluation = await trustingTestRoot().evaluation(serverChain: [], forDomain: "localhost", at: now)
        #expect(evaluation == .rejected(reason: "the server sent no certificate"))
    }

    /// AFN step 2 with a nil domain: `validatesDomainName` still selects `SecPolicyCreateSSL(true, nil)`,
    /// which checks the TLS-server extended key usage without a name; only the basic X.509 policy
    /// (`validatesDomainName` false) skips it. The client certificate's EKU is `clientAuth` only.
    @Test func sslPolicyWithoutADomainStillChecksServerUsage() async throws {
        var policy = trustingTestRoot()
        let client = try authority.clientIdentity.certificatesDER.map { try Courier.Certificate(derEncoded: Data($0)) }
        let evaluation = await policy.evaluation(serverChain: client, forDomain: nil, at: now)
        #expect(evaluation.rejectionReason?.hasPrefix("certificate is not for TLS servers") == true, "\(evaluation)")
        policy.validatesDomainName = false
        #expect(await policy.evaluation(serverChain: client, forDomain: nil, at: now) == .trusted)
        #expect(await policy.evaluation(serverChain: client, forDomain: "localhost", at: now) == .trusted)
    }

    /// RFC 5280 4.2.1.6: a leaf with an empty subject carries its names in a critical subject
    /// alternative names extension. Every policy must accept it, the basic X.509 one (which reads
    /// no names, like `SecPolicyCreateBasicX509`) included.
    @Test func criticalSubjectAlternativeNamesPassEveryPolicy() async throws {
        let day: TimeInterval = 24 * 60 * 60
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Critical Names Root") }
        let rootExtensions = try X509.Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true))
        }
        let leafKey = P256.Signing.PrivateKey()
        let leafExtensions = try X509.Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth])
            Critical(SubjectAlternativeNames([.dnsName("localhost")]))
        }
        func encoded(_ subject: DistinguishedName, _ key: P256.Signing.PublicKey, _ extensions: X509.Certificate.Extensions) throws
            -> Courier.Certificate
        {
            let certificate = try X509.Certificate(
                version: .v3, serialNumber: X509.Certificate.SerialNumber(), publicKey: X509.Certificate.PublicKey(key),
                notValidBefore: now - day, notValidAfter: now + day, issuer: rootName, subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: X509.Certificate.PrivateKey(rootKey)
            )
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return try Courier.Certificate(derEncoded: Data(serializer.serializedBytes))
        }
        let root = try encoded(rootName, rootKey.publicKey, rootExtensions)
        let leaf = try encoded(DistinguishedName(), leafKey.publicKey, leafExtensions)

        var policy = SecurityPolicy.default
        policy.trustedRootCertificates = [root]
        #expect(await policy.evaluation(serverChain: [leaf], forDomain: "localhost", at: now) == .trusted)
        #expect(await policy.evaluation(serverChain: [leaf], forDomain: nil, at: now) == .trusted)
        policy.validatesDomainName = false
        #expect(await policy.evaluation(serverChain: [leaf], forDomain: "localhost", at: now) == .trusted)
        policy.pinningMode = .certificate
        policy.pinnedCertificates = [leaf]
        #expect(await policy.evaluation(serverChain: [leaf], forDomain: "localhost", at: now) == .trusted)
    }

    // MARK: - Step 1 and allowInvalidCertificates

    @Test func step1AllowInvalidWithDomainValidationNeedsPinning() async throws {
        var policy = trustingTestRoot()
        policy.allowInvalidCertificates = true
        let message = "In order to validate a domain name for self signed certificates, you MUST use pinning."
        #expect(SecurityPolicy.domainValidationRequiresPinningMessage == message)
        // Even a perfectly valid chain is refused.
        #expect(try await evaluate(policy, .valid) == .rejected(reason: message))
        #expect(try await evaluate(policy, .selfSigned) == .rejected(reason: message))
        // A pinning mode without pinned certificates is the same as no pinning.
        policy.pinningMode = .certificate
        #expect(try await evaluate(policy, .valid) == .rejected(reason: message))
        policy.pinningMode = .publicKey
        #expect(try await evaluate(policy, .valid) == .rejected(reason: message))
        // Without a domain, step 1 does not apply.
        policy.pinningMode = .none
        #expect(try await evaluate(policy, .selfSigned, domain: nil) == .trusted)
    }

    @Test func allowInvalidWithoutDomainValidationAcceptsAnyChain() async throws {
        var policy = SecurityPolicy.default
        policy.allowInvalidCertificates = true
        policy.validatesDomainName = false
        for kind in ServerChainKind.allCases {
            #expect(try await evaluate(policy, kind) == .trusted, "\(kind)")
        }
    }

    // MARK: - Certificate pinning (steps 4 and 5)

    @Test func certificatePinOnLeafIntermediateOrRoot() async throws {
        for pinned in [try leaf(.valid), intermediate, root] {
            let policy = trustingTestRoot(.certificate, pinning: [pinned])
            #expect(try await evaluate(policy, .valid) == .trusted, "pinned \(pinned.subjectSummary)")
        }
    }

    @Test func certificatePinWorksWithoutAnySystemTrust() async throws {
        // The system store doesn't know the test CA: step 4 refuses unless invalid chains are allowed,
        // and then the pinned certificate alone anchors the chain.
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate])
        expectRejected(try await evaluate(policy, .valid), startingWith: "chain does not lead to a trusted root")
        policy.allowInvalidCertificates = true
        #expect(try await evaluate(policy, .valid) == .trusted)
        policy.pinnedCertificates = [try leaf(.valid)]
        #expect(try await evaluate(policy, .valid) == .trusted)
        policy.pinnedCertificates = [root]
        #expect(try await evaluate(policy, .valid) == .trusted)
    }

    @Test func wrongCertificatePinIsRejected() async throws {
        let other = try TestCertificateAuthority.generate(now: now)
        let otherRoot = try Courier.Certificate(derEncoded: Data(other.rootCertificateDER))
        let otherLeaf = try Courier.Certificate(derEncoded: Data(other.serverChain(.valid).certificatesDER[0]))
        for pinned in [otherRoot, otherLeaf, try leaf(.wrongHost)] {
            let policy = trustingTestRoot(.certificate, pinning: [pinned])
            expectRejected(
                try await evaluate(policy, .valid),
                startingWith: "no certificate in the chain matches a pinned certificate"
            )
        }
    }

    @Test func pinnedSelfSignedCertificateIsAccepted() async throws {
        let selfSigned = try leaf(.selfSigned)
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [selfSigned])
        policy.allowInvalidCertificates = true
        #expect(try await evaluate(policy, .selfSigned) == .trusted)
        #expect(try await evaluate(policy, .selfSigned, domain: "127.0.0.1") == .trusted)
        // Still checked: the host name and the dates.
        expectRejected(try await evaluate(policy, .selfSigned, domain: "example.com"), startingWith: "host name does not match")
        expectRejected(
            try await evaluate(policy, .selfSigned, at: now + 60 * 24 * 60 * 60),
            startingWith: "certificate has expired"
        )
        // A self-signed certificate that is not pinned never passes.
        policy.pinnedCertificates = [root]
        expectRejected(
            try await evaluate(policy, .selfSigned),
            startingWith: "no certificate in the chain matches a pinned certificate"
        )
    }

    @Test func pinnedButExpiredIsRejectedEvenWhenInvalidCertificatesAreAllowed() async throws {
        for pinned in [try leaf(.expired), intermediate, root] {
            var policy = trustingTestRoot(.certificate, pinning: [pinned])
            policy.allowInvalidCertificates = true
            expectRejected(try await evaluate(policy, .expired), startingWith: "certificate has expired")
        }
        for pinned in [try leaf(.notYetValid), intermediate, root] {
            var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pinned])
            policy.allowInvalidCertificates = true
            expectRejected(try await evaluate(policy, .notYetValid), startingWith: "certificate is not yet valid")
        }
    }

    @Test func certificatePinStillChecksTheHost() async throws {
        var policy = trustingTestRoot(.certificate, pinning: [root])
        policy.allowInvalidCertificates = true
        expectRejected(try await evaluate(policy, .wrongHost), startingWith: "host name does not match")
        policy.validatesDomainName = false
        #expect(try await evaluate(policy, .wrongHost) == .trusted)
    }

    // MARK: - Public-key pinning (steps 4 and 5)

    @Test func publicKeyPinOnLeafIntermediateAndRoot() async throws {
        for pinned in [try leaf(.valid), intermediate, root] {
            let policy = trustingTestRoot(.publicKey, pinning: [pinned])
            #expect(try await evaluate(policy, .valid) == .trusted, "pinned key of \(pinned.subjectSummary)")
        }
    }

    @Test func rootKeyPinNeedsTheValidatedChain() async throws {
        // The server never sends the root; its key is only in the chain validated against the
        // trusted roots.
        let sent = try chain(.valid)
        #expect(!sent.contains(root))
        let policy = trustingTestRoot(.publicKey, pinning: [root])
        #expect(await policy.evaluation(serverChain: sent, forDomain: "localhost", at: now) == .trusted)
    }

    @Test func publicKeyPinSurvivesRenewal() async throws {
        let fixture = try RenewalFixture.make(now: now)
        #expect(fixture.original != fixture.renewed)
        #expect(fixture.original.publicKeyDER == fixture.renewed.publicKeyDER)
        var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [fixture.original])
        policy.trustedRootCertificates = [fixture.root]
        #expect(await policy.evaluation(serverChain: [fixture.renewed], forDomain: "localhost", at: now) == .trusted)
        // Certificate pinning does not survive it.
        policy.pinningMode = .certificate
        let evaluation = await policy.evaluation(serverChain: [fixture.renewed], forDomain: "localhost", at: now)
        expectRejected(evaluation, startingWith: "no certificate in the chain matches a pinned certificate")
    }

    @Test func wrongPublicKeyIsRejected() async throws {
        let other = try TestCertificateAuthority.generate(now: now)
        let otherIntermediate = try Courier.Certificate(derEncoded: Data(other.intermediateCertificateDER))
        for pinned in [otherIntermediate, try leaf(.wrongHost)] {
            let policy = trustingTestRoot(.publicKey, pinning: [pinned])
            expectRejected(try await evaluate(policy, .valid), startingWith: "no public key in the chain matches a pinned key")
        }
    }

    @Test func publicKeyPinNeedsAValidChainUnlessInvalidIsAllowed() async throws {
        let policy = trustingTestRoot(.publicKey, pinning: [try leaf(.expired)])
        expectRejected(try await evaluate(policy, .expired), startingWith: "certificate has expired")
        let selfSignedPin = trustingTestRoot(.publicKey, pinning: [try leaf(.selfSigned)])
        expectRejected(try await evaluate(selfSignedPin, .selfSigned), startingWith: "chain does not lead to a trusted root")
    }

    /// AFN's documented pitfall (#3287, #4444): with `allowInvalidCertificates`, any chain that
    /// contains a pinned key passes, whatever its dates, issuer or host.
    @Test func allowInvalidWithPinnedKeyAcceptsAnyChainHoldingTheKey() async throws {
        var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try leaf(.selfSigned)])
        policy.allowInvalidCertificates = true
        #expect(try await evaluate(policy, .selfSigned) == .trusted)
        #expect(try await evaluate(policy, .selfSigned, domain: "evil.example") == .trusted)
        policy.pinnedCertificates = [try leaf(.expired)]
        #expect(try await evaluate(policy, .expired, domain: "evil.example") == .trusted)
        // A chain without the key still fails.
        expectRejected(try await evaluate(policy, .valid), startingWith: "no public key in the chain matches a pinned key")
    }
}

struct PolicyTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A root and two leaves for `localhost` that share one key pair: a certificate and its renewal.
struct RenewalFixture {
    let root: Courier.Certificate
    let original: Courier.Certificate
    let renewed: Courier.Certificate

    static func make(now: Date) throws -> RenewalFixture {
        let day: TimeInterval = 24 * 60 * 60
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("Renewal Test Root") }
        let leafKey = P256.Signing.PrivateKey()
        let leafName = try DistinguishedName { CommonName("localhost") }

        func make(
            subject: DistinguishedName,
            key: P256.Signing.PublicKey,
            isAuthority: Bool,
            from notBefore: Date,
            to notAfter: Date
        ) throws -> Courier.Certificate {
            let extensions = try X509.Certificate.Extensions {
                if isAuthority {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true))
                } else {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames([.dnsName("localhost")])
                }
            }
            let certificate = try X509.Certificate(
                version: .v3,
                serialNumber: X509.Certificate.SerialNumber(),
                publicKey: X509.Certificate.PublicKey(key),
                notValidBefore: notBefore,
                notValidAfter: notAfter,
                issuer: rootName,
                subject: subject,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions,
                issuerPrivateKey: X509.Certificate.PrivateKey(rootKey)
            )
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return try Courier.Certificate(derEncoded: Data(serializer.serializedBytes))
        }

        return RenewalFixture(
            root: try make(
                subject: rootName, key: rootKey.publicKey, isAuthority: true,
                from: now - 365 * day, to: now + 365 * day
            ),
            original: try make(
                subject: leafName, key: leafKey.publicKey, isAuthority: false,
                from: now - 200 * day, to: now - 10 * day
            ),
            renewed: try make(
                subject: leafName, key: leafKey.publicKey, isAuthority: false,
                from: now - 11 * day, to: now + 80 * day
            )
        )
    }
}
