import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import SwiftASN1
import Testing
@_spi(FixedExpiryValidationTime) import X509

import CourierTestServer

/// The in-memory certificate hierarchy: its shape read back with X509, its verdicts under
/// swift-certificates' `Verifier`, and real TLS handshakes over loopback with NIOSSL.
@Suite struct TestCertificateAuthorityTests {
    /// A fixed reference time for the parsing and `Verifier` tests (2025-06-15 12:00:00 UTC).
    static let now = Date(timeIntervalSince1970: 1_749_988_800)
    static let day: TimeInterval = 24 * 60 * 60

    let authority: TestCertificateAuthority
    let root: Certificate
    let intermediate: Certificate

    init() throws {
        authority = try TestCertificateAuthority.generate(now: Self.now)
        root = try Certificate(derEncoded: authority.rootCertificateDER)
        intermediate = try Certificate(derEncoded: authority.intermediateCertificateDER)
    }

    // MARK: - Shape of the hierarchy

    @Test func rootIsASelfSignedCertificateAuthority() throws {
        #expect(root.version == .v3)
        #expect(root.subject == root.issuer)
        #expect(root.subject.description.contains("Courier Test Root CA"))
        #expect(root.publicKey.isValidSignature(root.signature, for: root))
        #expect(root.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(root.notValidBefore <= Self.now && Self.now <= root.notValidAfter)

        let basicConstraints = try #require(try root.extensions.basicConstraints)
        #expect(basicConstraints == .isCertificateAuthority(maxPathLength: 1))
        #expect(root.extensions[oid: .X509ExtensionID.basicConstraints]?.critical == true)
        let keyUsage = try #require(try root.extensions.keyUsage)
        #expect(keyUsage.keyCertSign && keyUsage.cRLSign && !keyUsage.digitalSignature)
        #expect(root.extensions[oid: .X509ExtensionID.keyUsage]?.critical == true)
        let subjectKeyIdentifier = try #require(try root.extensions.subjectKeyIdentifier)
        #expect(subjectKeyIdentifier == SubjectKeyIdentifier(hash: root.publicKey))
    }

    @Test func intermediateIsSignedByTheRoot() throws {
        #expect(intermediate.issuer == root.subject)
        #expect(intermediate.subject != root.subject)
        #expect(intermediate.subject.description.contains("Courier Test Intermediate CA"))
        #expect(root.publicKey.isValidSignature(intermediate.signature, for: intermediate))
        #expect(intermediate.notValidBefore <= Self.now && Self.now <= intermediate.notValidAfter)

        let basicConstraints = try #require(try intermediate.extensions.basicConstraints)
        #expect(basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        #expect(intermediate.extensions[oid: .X509ExtensionID.basicConstraints]?.critical == true)
        let keyUsage = try #require(try intermediate.extensions.keyUsage)
        #expect(keyUsage.keyCertSign && keyUsage.cRLSign)
        let authorityKeyIdentifier = try #require(try intermediate.extensions.authorityKeyIdentifier)
        #expect(try authorityKeyIdentifier.keyIdentifier == root.extensions.subjectKeyIdentifier?.keyIdentifier)
        #expect(try intermediate.extensions.subjectKeyIdentifier == SubjectKeyIdentifier(hash: intermediate.publicKey))
    }

    @Test(arguments: ServerChainKind.allCases)
    func serverLeafHasTheAgreedShape(kind: ServerChainKind) throws {
        let chain = authority.serverChain(kind)
        let leaf = try Certificate(derEncoded: try #require(chain.certificatesDER.first))

        if kind == .selfSigned {
            #expect(chain.certificatesDER.count == 1)
            #expect(leaf.issuer == leaf.subject)
            #expect(leaf.publicKey.isValidSignature(leaf.signature, for: leaf))
        } else {
            #expect(chain.certificatesDER.count == 2)
            #expect(chain.certificatesDER.last == authority.intermediateCertificateDER)
            #expect(leaf.issuer == intermediate.subject)
            #expect(intermediate.publicKey.isValidSignature(leaf.signature, for: leaf))
            let authorityKeyIdentifier = try #require(try leaf.extensions.authorityKeyIdentifier)
            #expect(try authorityKeyIdentifier.keyIdentifier == intermediate.extensions.subjectKeyIdentifier?.keyIdentifier)
        }
        #expect(!chain.certificatesDER.contains(authority.rootCertificateDER))

        let (notBefore, notAfter): (TimeInterval, TimeInterval) =
            switch kind {
            case .valid, .wrongHost, .selfSigned: (-Self.day, 30 * Self.day)
            case .expired: (-30 * Self.day, -Self.day)
            case .notYetValid: (Self.day, 30 * Self.day)
            }
        #expect(abs(leaf.notValidBefore.timeIntervalSince(Self.now) - notBefore) < 1)
        #expect(abs(leaf.notValidAfter.timeIntervalSince(Self.now) - notAfter) < 1)

        #expect(try leaf.extensions.basicConstraints == .notCertificateAuthority)
        #expect(leaf.extensions[oid: .X509ExtensionID.basicConstraints]?.critical == true)
        let keyUsage = try #require(try leaf.extensions.keyUsage)
        #expect(keyUsage.digitalSignature && !keyUsage.keyCertSign)
        let extendedKeyUsage = try #require(try leaf.extensions.extendedKeyUsage)
        #expect(Array(extendedKeyUsage) == [.serverAuth])
        #expect(try leaf.extensions.subjectKeyIdentifier == SubjectKeyIdentifier(hash: leaf.publicKey))

        let names = try #require(try leaf.extensions.subjectAlternativeNames)
        let expectedNames: [GeneralName] =
            kind == .wrongHost
            ? [.dnsName("wrong.host.example")]
            : [
                .dnsName("localhost"),
                .dnsName("*.courier.test"),
                .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
            ]
        #expect(Array(names) == expectedNames)

        // The key is PKCS#8 DER and belongs to the leaf.
        let key = try P256.Signing.PrivateKey(derRepresentation: chain.privateKeyDER)
        #expect(Certificate.PublicKey(key.publicKey) == leaf.publicKey)
    }

    @Test func clientIdentityIsForClientAuthentication() throws {
        let chain = authority.clientIdentity
        #expect(chain.certificatesDER.count == 2)
        #expect(chain.certificatesDER.last == authority.intermediateCertificateDER)
        let leaf = try Certificate(derEncoded: try #require(chain.certificatesDER.first))
        #expect(leaf.issuer == intermediate.subject)
        #expect(intermediate.publicKey.isValidSignature(leaf.signature, for: leaf))
        #expect(try leaf.extensions.basicConstraints == .notCertificateAuthority)
        #expect(try leaf.extensions.keyUsage?.digitalSignature == true)
        let extendedKeyUsage = try #require(try leaf.extensions.extendedKeyUsage)
        #expect(Array(extendedKeyUsage) == [.clientAuth])
        let key = try P256.Signing.PrivateKey(derRepresentation: chain.privateKeyDER)
        #expect(Certificate.PublicKey(key.publicKey) == leaf.publicKey)
    }

    @Test func serialNumbersAndKeysAreRandom() throws {
        let other = try TestCertificateAuthority.generate(now: Self.now)
        var serials: [Certificate.SerialNumber] = []
        var keys: [Certificate.PublicKey] = []
        for ca in [authority, other] {
            var ders = [ca.rootCertificateDER, ca.intermediateCertificateDER]
            ders += ServerChainKind.allCases.compactMap { ca.serverChain($0).certificatesDER.first }
            ders += ca.clientIdentity.certificatesDER.prefix(1)
            for der in ders {
                let certificate = try Certificate(derEncoded: der)
                #expect(certificate.serialNumber.bytes.count <= 20)
                serials.append(certificate.serialNumber)
                keys.append(certificate.publicKey)
            }
        }
        #expect(Set(serials).count == serials.count)
        #expect(Set(keys).count == keys.count)
        #expect(other.rootCertificateDER != authority.rootCertificateDER)
    }

    @Test func pemMatchesDER() throws {
        #expect(authority.rootCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(authority.rootCertificatePEM.hasSuffix("-----END CERTIFICATE-----\n"))
        #expect(try Certificate(pemEncoded: authority.rootCertificatePEM) == root)
        #expect(try Certificate(pemEncoded: authority.intermediateCertificatePEM) == intermediate)

        for chain in ServerChainKind.allCases.map(authority.serverChain) + [authority.clientIdentity] {
            let documents = try PEMDocument.parseMultiple(pemString: chain.certificatesPEM)
            #expect(documents.map(\.discriminator) == Array(repeating: "CERTIFICATE", count: chain.certificatesDER.count))
            #expect(documents.map(\.derBytes) == chain.certificatesDER)
            let keyDocument = try PEMDocument(pemString: chain.privateKeyPEM)
            #expect(keyDocument.discriminator == "PRIVATE KEY")
            #expect(keyDocument.derBytes == chain.privateKeyDER)
            _ = try P256.Signing.PrivateKey(pemRepresentation: chain.privateKeyPEM)
        }
    }

    @Test func sharedIsGeneratedOnce() async throws {
        let first = try TestCertificateAuthority.shared.rootCertificateDER
        let roots = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<8 {
                group.addTask { try TestCertificateAuthority.shared.rootCertificateDER }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(roots.allSatisfy { $0 == first })
        let shared = try TestCertificateAuthority.shared
        #expect(abs(shared.generatedAt.timeIntervalSinceNow) < 3600)
    }

    // MARK: - swift-certificates' Verifier, the root as the only anchor

    private func verifies(
        _ chain: ServerChain,
        hostname: String?,
        ip: String? = nil,
        at time: Date = now
    ) async throws -> Bool {
        let certificates = try chain.certificatesDER.map { try Certificate(derEncoded: $0) }
        let leaf = try #require(certificates.first)
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            ServerIdentityPolicy(serverHostname: hostname, serverIP: ip)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(certificates.dropFirst()))
        switch result {
        case .validCertificate(let validated):
            #expect(validated.last == root)
            return true
        case .couldNotValidate:
            return false
        }
    }

    @Test func validVerifiesForLocalhostAndLoopbackAddresses() async throws {
        let valid = authority.serverChain(.valid)
        #expect(try await verifies(valid, hostname: "localhost"))
        #expect(try await verifies(valid, hostname: nil, ip: "127.0.0.1"))
        #expect(try await verifies(valid, hostname: nil, ip: "::1"))
        #expect(try await !verifies(valid, hostname: "example.com"))
        #expect(try await !verifies(valid, hostname: nil, ip: "127.0.0.2"))
    }

    @Test func clientIdentityChainsToTheRoot() async throws {
        let chain = authority.clientIdentity
        let certificates = try chain.certificatesDER.map { try Certificate(derEncoded: $0) }
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: Self.now)
        }
        let result = await verifier.validate(
            leaf: try #require(certificates.first),
            intermediates: CertificateStore(certificates.dropFirst())
        )
        guard case .validCertificate = result else {
            Issue.record("client identity does not verify: \(result)")
            return
        }
    }

    @Test func wrongHostFailsOnlyForTheHostName() async throws {
        let wrongHost = authority.serverChain(.wrongHost)
        #expect(try await !verifies(wrongHost, hostname: "localhost"))
        #expect(try await !verifies(wrongHost, hostname: nil, ip: "127.0.0.1"))
        #expect(try await verifies(wrongHost, hostname: "wrong.host.example"))
    }

    @Test func expiredAndNotYetValidFailAtNowButNotInsideTheirPeriod() async throws {
        let expired = authority.serverChain(.expired)
        #expect(try await !verifies(expired, hostname: "localhost"))
        #expect(try await verifies(expired, hostname: "localhost", at: Self.now - 10 * Self.day))

        let notYetValid = authority.serverChain(.notYetValid)
        #expect(try await !verifies(notYetValid, hostname: "localhost"))
        #expect(try await verifies(notYetValid, hostname: "localhost", at: Self.now + 10 * Self.day))
    }

    @Test func selfSignedDoesNotChainToTheRoot() async throws {
        #expect(try await !verifies(authority.serverChain(.selfSigned), hostname: "localhost"))
        #expect(try await !verifies(authority.serverChain(.selfSigned), hostname: nil, ip: "127.0.0.1"))
    }

    @Test func anotherAuthoritysChainDoesNotVerify() async throws {
        let other = try TestCertificateAuthority.generate(now: Self.now)
        #expect(try await !verifies(other.serverChain(.valid), hostname: "localhost"))
    }

    // MARK: - NIOSSL accepts every chain and key

    @Test(arguments: ServerChainKind.allCases)
    func nioSSLLoadsTheChain(kind: ServerChainKind) throws {
        try loadIntoNIOSSL(authority.serverChain(kind))
    }

    @Test func nioSSLLoadsTheClientIdentityAndTheCAs() throws {
        try loadIntoNIOSSL(authority.clientIdentity)
        _ = try NIOSSLCertificate(bytes: authority.rootCertificateDER, format: .der)
        _ = try NIOSSLCertificate(bytes: Array(authority.rootCertificatePEM.utf8), format: .pem)
        _ = try NIOSSLCertificate(bytes: authority.intermediateCertificateDER, format: .der)
        let configuration = try authority.serverChain(.valid)
            .makeServerTLSConfiguration(requireClientCertificateSignedBy: authority.rootCertificateDER)
        #expect(configuration.certificateVerification == .noHostnameVerification)
        #expect(configuration.trustRoots == .certificates([try NIOSSLCertificate(bytes: authority.rootCertificateDER, format: .der)]))
        _ = try NIOSSLContext(configuration: configuration)
    }

    private func loadIntoNIOSSL(_ chain: ServerChain) throws {
        let certificates = try chain.certificatesDER.map { try NIOSSLCertificate(bytes: $0, format: .der) }
        _ = try NIOSSLPrivateKey(bytes: chain.privateKeyDER, format: .der)
        #expect(try NIOSSLCertificate.fromPEMBytes(Array(chain.certificatesPEM.utf8)) == certificates)
        _ = try NIOSSLPrivateKey(bytes: Array(chain.privateKeyPEM.utf8), format: .pem)

        // NIOSSL and swift-certificates see the same SubjectPublicKeyInfo.
        let leaf = try Certificate(derEncoded: try #require(chain.certificatesDER.first))
        var serializer = DER.Serializer()
        try serializer.serialize(leaf.publicKey)
        #expect(try #require(certificates.first).extractPublicKey().toSPKIBytes() == serializer.serializedBytes)

        // A context checks that the private key matches the leaf.
        let configuration = try chain.makeServerTLSConfiguration()
        #expect(configuration.certificateVerification == .none)
        _ = try NIOSSLContext(configuration: configuration)
    }
}
