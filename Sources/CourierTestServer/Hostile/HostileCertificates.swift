public import Foundation
import Crypto
import SwiftASN1
import X509

/// Certificate chains a hostile or legacy server presents, for security tests.
///
/// - Pin confusion: a chain that is valid on its own with someone else's genuine certificate
///   appended (``appending(_:to:)``), and a leaf that names a genuine certificate as its issuer
///   without being signed by it (``leafClaimingIssuer(_:now:)``). A pin must match neither
///   appended certificate.
/// - Legacy issuers: a hierarchy whose root or intermediate is an X.509 version 1 certificate
///   (no extensions, so no basic constraints saying it is a CA): ``hierarchy(version1:now:)``.
///
/// Everything is generated in memory with swift-certificates and swift-crypto (P-256 keys,
/// ECDSA with SHA-256), like ``TestCertificateAuthority``. Leaves name DNS `localhost` and the
/// IP addresses `127.0.0.1` and `::1`, and are valid from a day before `now` to thirty days
/// after it; CAs from a year before to five years after.
public enum HostileCertificates {
    /// Which certificate of a ``LegacyHierarchy`` is X.509 version 1.
    public enum Version1Position: Sendable, CaseIterable {
        /// None: every certificate is version 3 (the control case).
        case none
        /// The self-signed root (a trust anchor) is version 1.
        case root
        /// The intermediate, sent by the server and signing the leaf, is version 1.
        case intermediate
    }

    /// A root, one intermediate signed by it, and a `localhost` leaf signed by the intermediate.
    public struct LegacyHierarchy: Sendable {
        /// The self-signed root, DER: the anchor a client trusts. The server never sends it.
        public let rootCertificateDER: [UInt8]
        /// The intermediate, DER.
        public let intermediateCertificateDER: [UInt8]
        /// What the server presents: the leaf, then the intermediate, with the leaf's key.
        public let serverChain: ServerChain
    }

    /// `chain` with `extraCertificatesDER` appended after its own certificates: the server
    /// presents the same leaf (and key), followed by certificates that are not part of its path.
    ///
    /// - Parameters:
    ///   - extraCertificatesDER: The certificates to append (for example a victim's genuine leaf).
    ///   - chain: The chain whose leaf and key the server really uses.
    /// - Returns: The padded chain.
    public static func appending(_ extraCertificatesDER: [[UInt8]], to chain: ServerChain) -> ServerChain {
        ServerChain(certificatesDER: chain.certificatesDER + extraCertificatesDER, privateKeyDER: chain.privateKeyDER)
    }

    /// A leaf for `localhost` whose issuer name and authority key identifier are those of
    /// `claimedIssuerDER`, but which is signed by a fresh, unrelated key. The chain is the leaf,
    /// then the claimed issuer: linked by name, not by signature.
    ///
    /// - Parameters:
    ///   - claimedIssuerDER: The genuine certificate the leaf pretends to be issued by.
    ///   - now: The reference time of the validity period.
    /// - Returns: The chain `[forged leaf, claimed issuer]` and the forged leaf's key.
    /// - Throws: An error from swift-certificates if `claimedIssuerDER` does not parse or
    ///   signing fails.
    public static func leafClaimingIssuer(_ claimedIssuerDER: [UInt8], now: Date = Date()) throws -> ServerChain {
        let claimedIssuer = try Certificate(derEncoded: claimedIssuerDER)
        let claimedIdentifier =
            try claimedIssuer.extensions.subjectKeyIdentifier?.keyIdentifier
            ?? SubjectKeyIdentifier(hash: claimedIssuer.publicKey).keyIdentifier
        let forger = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try makeCertificate(
            version: .v3,
            subject: try leafName("forged"),
            publicKey: Certificate.PublicKey(leafKey.publicKey),
            issuerName: claimedIssuer.subject,
            issuerKeyIdentifier: claimedIdentifier,
            signingKey: Certificate.PrivateKey(forger),
            now: now,
            isAuthority: false
        )
        return ServerChain(
            certificatesDER: [try derBytes(of: leaf), claimedIssuerDER],
            privateKeyDER: Array(leafKey.derRepresentation)
        )
    }

    /// A three-certificate hierarchy in which the certificate at `position` is X.509 version 1.
    ///
    /// A version 1 certificate has no extensions: nothing says it is a CA, so RFC 5280 (6.1.4 k)
    /// forbids it as an intermediate unless verified out of band. Version 3 CAs carry critical
    /// basic constraints (`cA` true) and a key usage with `keyCertSign`.
    ///
    /// - Parameters:
    ///   - position: Which certificate is version 1.
    ///   - now: The reference time of every validity period.
    /// - Returns: The root, the intermediate and the chain a server presents.
    /// - Throws: An error from swift-certificates if a certificate can't be built or signed.
    public static func hierarchy(version1 position: Version1Position, now: Date = Date()) throws -> LegacyHierarchy {
        let tag = String(UInt32.random(in: .min ... .max), radix: 16)
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            OrganizationName("Courier Hostile")
            CommonName("Courier Legacy Root \(tag)")
        }
        let rootPublicKey = Certificate.PublicKey(rootKey.publicKey)
        let rootIdentifier = SubjectKeyIdentifier(hash: rootPublicKey).keyIdentifier
        let root = try makeCertificate(
            version: position == .root ? .v1 : .v3,
            subject: rootName,
            publicKey: rootPublicKey,
            issuerName: rootName,
            issuerKeyIdentifier: nil,
            signingKey: Certificate.PrivateKey(rootKey),
            now: now,
            isAuthority: true
        )

        let intermediateKey = P256.Signing.PrivateKey()
        let intermediateName = try DistinguishedName {
            OrganizationName("Courier Hostile")
            CommonName("Courier Legacy Intermediate \(tag)")
        }
        let intermediatePublicKey = Certificate.PublicKey(intermediateKey.publicKey)
        let intermediate = try makeCertificate(
            version: position == .intermediate ? .v1 : .v3,
            subject: intermediateName,
            publicKey: intermediatePublicKey,
            issuerName: rootName,
            issuerKeyIdentifier: position == .root ? nil : rootIdentifier,
            signingKey: Certificate.PrivateKey(rootKey),
            now: now,
            isAuthority: true
        )

        let leafKey = P256.Signing.PrivateKey()
        let leaf = try makeCertificate(
            version: .v3,
            subject: try leafName("legacy-\(position)"),
            publicKey: Certificate.PublicKey(leafKey.publicKey),
            issuerName: intermediateName,
            issuerKeyIdentifier: position == .intermediate ? nil : SubjectKeyIdentifier(hash: intermediatePublicKey).keyIdentifier,
            signingKey: Certificate.PrivateKey(intermediateKey),
            now: now,
            isAuthority: false
        )
        let intermediateDER = try derBytes(of: intermediate)
        return LegacyHierarchy(
            rootCertificateDER: try derBytes(of: root),
            intermediateCertificateDER: intermediateDER,
            serverChain: ServerChain(
                certificatesDER: [try derBytes(of: leaf), intermediateDER],
                privateKeyDER: Array(leafKey.derRepresentation)
            )
        )
    }

    // MARK: - Building

    private static func leafName(_ label: String) throws -> DistinguishedName {
        try DistinguishedName {
            OrganizationName("Courier Hostile")
            OrganizationalUnitName(label)
            CommonName("localhost")
        }
    }

    /// Builds and signs one certificate. A version 1 certificate gets no extensions at all;
    /// a version 3 CA gets critical basic constraints and key usage, a version 3 leaf the server
    /// profile of ``TestCertificateAuthority`` (serverAuth, `localhost` names).
    private static func makeCertificate(
        version: Certificate.Version,
        subject: DistinguishedName,
        publicKey: Certificate.PublicKey,
        issuerName: DistinguishedName,
        issuerKeyIdentifier: ArraySlice<UInt8>?,
        signingKey: Certificate.PrivateKey,
        now: Date,
        isAuthority: Bool
    ) throws -> Certificate {
        let day: TimeInterval = 24 * 60 * 60
        let extensions: Certificate.Extensions
        if version == .v1 {
            extensions = Certificate.Extensions()
        } else {
            extensions = try Certificate.Extensions {
                if isAuthority {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                } else {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames(TestCertificateAuthority.localhostNames)
                }
                SubjectKeyIdentifier(hash: publicKey)
                if let issuerKeyIdentifier {
                    AuthorityKeyIdentifier(keyIdentifier: issuerKeyIdentifier)
                }
            }
        }
        return try Certificate(
            version: version,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: now - (isAuthority ? 365 : 1) * day,
            notValidAfter: now + (isAuthority ? 1825 : 30) * day,
            issuer: issuerName,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: signingKey
        )
    }


    private static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
