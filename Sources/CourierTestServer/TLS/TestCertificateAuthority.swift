public import Foundation
import Crypto
import SwiftASN1
import X509

/// A throwaway certificate hierarchy for TLS tests, generated in memory.
///
/// The hierarchy is a self-signed root CA, an intermediate CA signed by the root, and leaf
/// certificates signed by the intermediate (one per ``ServerChainKind``, plus a client
/// certificate for mutual TLS). Everything is built with swift-certificates and swift-crypto
/// (P-256 keys, ECDSA with SHA-256), never by calling `openssl`, so generating one takes
/// milliseconds.
///
/// A test trusts ``rootCertificateDER`` (or ``rootCertificatePEM``) as its only anchor, picks the
/// chain the server presents with ``serverChain(_:)``, and can pin the root or the intermediate.
public struct TestCertificateAuthority: Sendable {
    /// The moment the validity periods were computed from (the `now` passed to ``generate(now:)``).
    ///
    /// Verify certificates "at now" against this date to get the outcome each
    /// ``ServerChainKind`` promises, however long after generation the check runs.
    public let generatedAt: Date

    /// The root CA certificate, DER-encoded. It is self-signed and is the only trust anchor
    /// a client needs; servers never send it.
    public let rootCertificateDER: [UInt8]

    /// The root CA certificate as a PEM document (`-----BEGIN CERTIFICATE-----`).
    public var rootCertificatePEM: String {
        Self.pem(type: "CERTIFICATE", der: rootCertificateDER)
    }

    /// The intermediate CA certificate, DER-encoded. It is signed by the root and signs every
    /// leaf except ``ServerChainKind/selfSigned``.
    public let intermediateCertificateDER: [UInt8]

    /// The intermediate CA certificate as a PEM document (`-----BEGIN CERTIFICATE-----`).
    public var intermediateCertificatePEM: String {
        Self.pem(type: "CERTIFICATE", der: intermediateCertificateDER)
    }

    /// A client certificate for mutual TLS, issued by the intermediate, with extended key usage
    /// `clientAuth`; its chain is the client leaf, then the intermediate.
    public let clientIdentity: ServerChain

    private let valid: ServerChain
    private let wrongHost: ServerChain
    private let expired: ServerChain
    private let notYetValid: ServerChain
    private let selfSigned: ServerChain

    /// The chain a server presents for `kind`: the leaf first, then the intermediate.
    ///
    /// The root is never included. For ``ServerChainKind/selfSigned`` the chain is the one
    /// self-signed certificate.
    public func serverChain(_ kind: ServerChainKind) -> ServerChain {
        switch kind {
        case .valid: valid
        case .wrongHost: wrongHost
        case .expired: expired
        case .notYetValid: notYetValid
        case .selfSigned: selfSigned
        }
    }

    /// One certificate authority per process, generated on first use.
    ///
    /// Generation runs once, lazily and thread-safely (a `static let`); if it failed, every
    /// access rethrows that same error.
    public static var shared: TestCertificateAuthority {
        get throws { try sharedResult.get() }
    }

    private static let sharedResult: Result<TestCertificateAuthority, any Error> = Result {
        try generate()
    }

    /// Generates a root CA, an intermediate CA signed by the root, and leaves signed by the
    /// intermediate, all with P-256 keys, in memory.
    ///
    /// - Parameter now: The reference time for every validity period (see ``ServerChainKind``).
    ///   The CAs are valid from a year before `now` to ten (root) and five (intermediate) years
    ///   after it.
    /// - Returns: A new, independent hierarchy with random keys and random serial numbers.
    /// - Throws: An error from swift-certificates if a certificate cannot be built or signed.
    public static func generate(now: Date = Date()) throws -> TestCertificateAuthority {
        let day: TimeInterval = 24 * 60 * 60
        // A short random tag keeps the CA names of two hierarchies in one process apart, so a
        // verifier never confuses one run's intermediate with another's.
        let tag = String(UInt32.random(in: .min ... .max), radix: 16)

        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            OrganizationName("Courier Test")
            CommonName("Courier Test Root CA \(tag)")
        }
        let root = try makeCertificate(
            subject: rootName,
            publicKey: Certificate.PublicKey(rootKey.publicKey),
            issuer: nil,
            issuerKey: Certificate.PrivateKey(rootKey),
            notBefore: now - 365 * day,
            notAfter: now + 3650 * day,
            profile: .certificateAuthority(maxPathLength: 1)
        )
        let rootIssuer = try Issuer(certificate: root, key: Certificate.PrivateKey(rootKey))

        let intermediateKey = P256.Signing.PrivateKey()
        let intermediateName = try DistinguishedName {
            OrganizationName("Courier Test")
            CommonName("Courier Test Intermediate CA \(tag)")
        }
        let intermediate = try makeCertificate(
            subject: intermediateName,
            publicKey: Certificate.PublicKey(intermediateKey.publicKey),
            issuer: rootIssuer,
            issuerKey: rootIssuer.key,
            notBefore: now - 365 * day,
            notAfter: now + 1825 * day,
            profile: .certificateAuthority(maxPathLength: 0)
        )
        let intermediateIssuer = try Issuer(certificate: intermediate, key: Certificate.PrivateKey(intermediateKey))
        let intermediateDER = try derBytes(of: intermediate)

        func issuedLeaf(
            _ label: String,
            commonName: String,
            from notBefore: Date,
            to notAfter: Date,
            profile: Profile
        ) throws -> ServerChain {
            let key = P256.Signing.PrivateKey()
            let leaf = try makeCertificate(
                subject: leafName(commonName: commonName, label: label),
                publicKey: Certificate.PublicKey(key.publicKey),
                issuer: intermediateIssuer,
                issuerKey: intermediateIssuer.key,
                notBefore: notBefore,
                notAfter: notAfter,
                profile: profile
            )
            return ServerChain(
                certificatesDER: [try derBytes(of: leaf), intermediateDER],
                privateKeyDER: Array(key.derRepresentation)
            )
        }

        let localNames = localhostNames
        let valid = try issuedLeaf(
            "valid", commonName: "localhost",
            from: now - day, to: now + 30 * day, profile: .server(localNames)
        )
        let wrongNames: [GeneralName] = [.dnsName("wrong.host.example")]
        let wrongHost = try issuedLeaf(
            "wrongHost", commonName: "wrong.host.example",
            from: now - day, to: now + 30 * day, profile: .server(wrongNames)
        )
        let expired = try issuedLeaf(
            "expired", commonName: "localhost",
            from: now - 30 * day, to: now - day, profile: .server(localNames)
        )
        let notYetValid = try issuedLeaf(
            "notYetValid", commonName: "localhost",
            from: now + day, to: now + 30 * day, profile: .server(localNames)
        )
        let clientIdentity = try issuedLeaf(
            "client", commonName: "Courier Test Client",
            from: now - day, to: now + 30 * day, profile: .client
        )

        let selfSignedKey = P256.Signing.PrivateKey()
        let selfSignedName = try leafName(commonName: "localhost", label: "selfSigned")
        let selfSignedPublicKey = Certificate.PublicKey(selfSignedKey.publicKey)
        let selfSignedCertificate = try makeCertificate(
            subject: selfSignedName,
            publicKey: selfSignedPublicKey,
            issuer: Issuer(
                name: selfSignedName,
                keyIdentifier: SubjectKeyIdentifier(hash: selfSignedPublicKey).keyIdentifier,
                key: Certificate.PrivateKey(selfSignedKey)
            ),
            issuerKey: Certificate.PrivateKey(selfSignedKey),
            notBefore: now - day,
            notAfter: now + 30 * day,
            profile: .server(localNames)
        )
        let selfSigned = ServerChain(
            certificatesDER: [try derBytes(of: selfSignedCertificate)],
            privateKeyDER: Array(selfSignedKey.derRepresentation)
        )

        return TestCertificateAuthority(
            generatedAt: now,
            rootCertificateDER: try derBytes(of: root),
            intermediateCertificateDER: intermediateDER,
            clientIdentity: clientIdentity,
            valid: valid,
            wrongHost: wrongHost,
            expired: expired,
            notYetValid: notYetValid,
            selfSigned: selfSigned
        )
    }
}

extension TestCertificateAuthority {
    /// A copy of this authority whose ``serverChain(_:)`` for `kind` is `chain`, so a
    /// ``TestServer`` configured with it presents an arbitrary (for example hostile) chain;
    /// every other chain, the root and the intermediate stay this authority's.
    ///
    /// - Parameters:
    ///   - chain: The certificates and key to present (see `HostileCertificates`).
    ///   - kind: The chain kind it replaces.
    /// - Returns: The modified copy.
    public func presenting(_ chain: ServerChain, as kind: ServerChainKind) -> TestCertificateAuthority {
        func pick(_ candidate: ServerChainKind) -> ServerChain { candidate == kind ? chain : serverChain(candidate) }
        return TestCertificateAuthority(
            generatedAt: generatedAt,
            rootCertificateDER: rootCertificateDER,
            intermediateCertificateDER: intermediateCertificateDER,
            clientIdentity: clientIdentity,
            valid: pick(.valid),
            wrongHost: pick(.wrongHost),
            expired: pick(.expired),
            notYetValid: pick(.notYetValid),
            selfSigned: pick(.selfSigned)
        )
    }
}

/// Which certificate chain a TLS test server presents.
///
/// Validity periods are relative to the `now` given to ``TestCertificateAuthority/generate(now:)``.
public enum ServerChainKind: String, Sendable, CaseIterable {
    /// Issued by the intermediate for DNS `localhost` and `*.courier.test`, IP `127.0.0.1` and
    /// IP `::1`; valid from one day before `now` to thirty days after it. Verifies against the
    /// root.
    case valid
    /// Issued by the intermediate for DNS `wrong.host.example` only; fails host-name checks
    /// for `localhost` and the loopback addresses.
    case wrongHost
    /// The names of ``valid``, but valid from thirty days before `now` to one day before it.
    case expired
    /// The names of ``valid``, but valid from one day after `now` to thirty days after it.
    case notYetValid
    /// A self-signed leaf (not a CA) with the names and dates of ``valid``; it does not chain
    /// to the root.
    case selfSigned
}

/// A certificate chain and the private key of its first certificate.
///
/// Used for the chain a test server presents and for the client identity of mutual TLS.
public struct ServerChain: Sendable {
    /// The DER-encoded certificates, leaf first, then its issuers (never the root).
    public let certificatesDER: [[UInt8]]

    /// The certificates as concatenated PEM documents, leaf first, each ending in a newline.
    public var certificatesPEM: String {
        certificatesDER.map { TestCertificateAuthority.pem(type: "CERTIFICATE", der: $0) }.joined()
    }

    /// The PKCS#8 DER encoding of the leaf's P-256 private key.
    public let privateKeyDER: [UInt8]

    /// The leaf's private key as a PKCS#8 PEM document (`-----BEGIN PRIVATE KEY-----`).
    public var privateKeyPEM: String {
        TestCertificateAuthority.pem(type: "PRIVATE KEY", der: privateKeyDER)
    }
}

// MARK: - Building certificates

extension TestCertificateAuthority {
    /// What a certificate is for; decides its extensions.
    private enum Profile {
        case certificateAuthority(maxPathLength: Int)
        case server([GeneralName])
        case client
    }

    /// The signer of a certificate: its name and key identifier go into the new certificate.
    private struct Issuer {
        var name: DistinguishedName
        var keyIdentifier: ArraySlice<UInt8>
        var key: Certificate.PrivateKey

        init(name: DistinguishedName, keyIdentifier: ArraySlice<UInt8>, key: Certificate.PrivateKey) {
            self.name = name
            self.keyIdentifier = keyIdentifier
            self.key = key
        }

        init(certificate: Certificate, key: Certificate.PrivateKey) throws {
            let identifier = try certificate.extensions.subjectKeyIdentifier?.keyIdentifier
            self.init(
                name: certificate.subject,
                keyIdentifier: identifier ?? SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier,
                key: key
            )
        }
    }

    /// DNS `localhost` and `*.courier.test` (many names for one server: coalescing, resolver
    /// overrides), IP `127.0.0.1` and IP `::1` (also the names of the hostile chains).
    static var localhostNames: [GeneralName] {
        let ipv4: [UInt8] = [127, 0, 0, 1]
        let ipv6: [UInt8] = Array(repeating: 0, count: 15) + [1]
        return [
            .dnsName("localhost"),
            .dnsName("*.courier.test"),
            .ipAddress(ASN1OctetString(contentBytes: ipv4[...])),
            .ipAddress(ASN1OctetString(contentBytes: ipv6[...])),
        ]
    }

    private static func leafName(commonName: String, label: String) throws -> DistinguishedName {
        try DistinguishedName {
            OrganizationName("Courier Test")
            OrganizationalUnitName(label)
            CommonName(commonName)
        }
    }

    /// Builds and signs one certificate; `issuer == nil` makes it self-signed by `issuerKey`
    /// without an authority key identifier (a root).
    private static func makeCertificate(
        subject: DistinguishedName,
        publicKey: Certificate.PublicKey,
        issuer: Issuer?,
        issuerKey: Certificate.PrivateKey,
        notBefore: Date,
        notAfter: Date,
        profile: Profile
    ) throws -> Certificate {
        let subjectKeyIdentifier = SubjectKeyIdentifier(hash: publicKey)
        let extensions = try Certificate.Extensions {
            switch profile {
            case .certificateAuthority(let maxPathLength):
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: maxPathLength))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            case .server(let names):
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            case .client:
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
            }
            subjectKeyIdentifier
            if let issuer {
                AuthorityKeyIdentifier(keyIdentifier: issuer.keyIdentifier)
            }
        }
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: notBefore,
            notValidAfter: notAfter,
            issuer: issuer?.name ?? subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: issuerKey
        )
    }

    private static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// One PEM document ending in a newline.
    static func pem(type: String, der: [UInt8]) -> String {
        PEMDocument(type: type, derBytes: der).pemString + "\n"
    }
}
