public import Foundation
import SwiftASN1
import X509

/// One X.509 certificate, parsed once and kept with its exact DER bytes.
///
/// AFNetworking pins certificates as `NSData` (DER); Courier keeps the DER too, so two
/// certificates are equal exactly when their DER bytes are (AFN's certificate-pinning
/// comparison), and a `Set<Certificate>` holds each certificate once.
///
/// Create one from DER (``init(derEncoded:)``), from PEM text (``init(pemEncoded:)``,
/// ``certificates(pemEncoded:)``) or from files (``certificates(inDirectory:)``,
/// ``certificates(contentsOf:)``). Parsing failures throw ``CourierError/invalidCertificate(reason:)``.
public struct Certificate: Hashable, Sendable, CustomStringConvertible {
    /// The certificate's DER encoding, exactly as it was given.
    public let derBytes: [UInt8]

    /// The full DER-encoded SubjectPublicKeyInfo (algorithm and key), the unit a public-key pin
    /// compares. Equal to `openssl x509 -pubkey | openssl pkey -pubin -outform der`.
    public let publicKeyDER: [UInt8]

    /// The parsed certificate (swift-certificates' type).
    let x509: X509.Certificate

    /// Parses a DER-encoded certificate.
    ///
    /// - Parameter derEncoded: The certificate's DER bytes (AFN's `.cer` files).
    /// - Throws: ``CourierError/invalidCertificate(reason:)`` when the bytes are not one X.509 certificate.
    public init(derEncoded: Data) throws {
        try self.init(derBytes: Array(derEncoded))
    }

    /// Parses the first `CERTIFICATE` block of a PEM document.
    ///
    /// Text around the block (comments, `subject=` lines) and blocks of other types are ignored;
    /// use ``certificates(pemEncoded:)`` to get every certificate of a bundle.
    ///
    /// - Parameter pemEncoded: Text holding at least one `-----BEGIN CERTIFICATE-----` block.
    /// - Throws: ``CourierError/invalidCertificate(reason:)`` when there is no certificate block or
    ///   the first one does not parse.
    public init(pemEncoded: String) throws {
        let documents = try Self.certificateDocuments(inPEM: pemEncoded)
        guard let first = documents.first else {
            throw CourierError.invalidCertificate(reason: "no -----BEGIN CERTIFICATE----- block in the PEM text")
        }
        try self.init(derBytes: first.derBytes)
    }

    /// Parses every `CERTIFICATE` block of a PEM document (a CA bundle, a chain), in order.
    ///
    /// - Parameter pemEncoded: Text holding one or more `-----BEGIN CERTIFICATE-----` blocks.
    /// - Returns: The certificates in the order they appear; never empty.
    /// - Throws: ``CourierError/invalidCertificate(reason:)`` when there is no certificate block or
    ///   one of them does not parse.
    public static func certificates(pemEncoded: String) throws -> [Certificate] {
        let documents = try certificateDocuments(inPEM: pemEncoded)
        guard !documents.isEmpty else {
            throw CourierError.invalidCertificate(reason: "no -----BEGIN CERTIFICATE----- block in the PEM text")
        }
        return try documents.enumerated().map { index, document in
            do {
                return try Certificate(derBytes: document.derBytes)
            } catch CourierError.invalidCertificate(let reason) {
                throw CourierError.invalidCertificate(reason: "PEM certificate #\(index + 1): \(reason)")
            }
        }
    }

    /// Parses DER bytes.
    init(derBytes: [UInt8]) throws {
        guard !derBytes.isEmpty else {
            throw CourierError.invalidCertificate(reason: "no bytes")
        }
        let parsed: X509.Certificate
        do {
            parsed = try X509.Certificate(derEncoded: derBytes)
        } catch {
            throw CourierError.invalidCertificate(reason: "not a DER-encoded X.509 certificate (\(error))")
        }
        let publicKeyDER: [UInt8]
        do {
            publicKeyDER = try Self.subjectPublicKeyInfoDER(of: parsed)
        } catch {
            throw CourierError.invalidCertificate(reason: "its public key can't be encoded (\(error))")
        }
        self.init(x509: parsed, derBytes: derBytes, publicKeyDER: publicKeyDER)
    }

    /// Wraps an already parsed certificate; `derBytes` must be its encoding.
    private init(x509: X509.Certificate, derBytes: [UInt8], publicKeyDER: [UInt8]) {
        self.x509 = x509
        self.derBytes = derBytes
        self.publicKeyDER = publicKeyDER
    }

    /// The full SubjectPublicKeyInfo DER of a certificate (not `subjectPublicKeyInfoBytes`,
    /// which is only the BIT STRING contents).
    static func subjectPublicKeyInfoDER(of certificate: X509.Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate.publicKey)
        return serializer.serializedBytes
    }

    // MARK: - Reading

    /// The DER encoding as `Data` (AFN's representation of a pinned certificate).
    public var data: Data { Data(derBytes) }

    /// The subject's distinguished name, most significant last (`CN=localhost,O=Example`),
    /// for messages.
    public var subjectSummary: String { x509.subject.description }

    /// The issuer's distinguished name, in the format of ``subjectSummary``.
    public var issuerSummary: String { x509.issuer.description }

    /// The start of the validity period.
    public var notValidBefore: Date { x509.notValidBefore }

    /// The end of the validity period.
    public var notValidAfter: Date { x509.notValidAfter }

    /// The subject, issuer and validity period on one line.
    public var description: String {
        "Certificate(subject: \(subjectSummary), issuer: \(issuerSummary), valid \(Self.format(notValidBefore)) – \(Self.format(notValidAfter)))"
    }

    // MARK: - Equality

    /// Two certificates are equal when their DER bytes are (AFN's pinning comparison).
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.derBytes == rhs.derBytes
    }

    /// Hashes the DER bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derBytes)
    }

    // MARK: - Helpers

    /// The `CERTIFICATE` documents of a PEM text; other block types are skipped.
    private static func certificateDocuments(inPEM text: String) throws -> [PEMDocument] {
        do {
            return try PEMDocument.parseMultiple(pemString: text).filter { $0.discriminator == "CERTIFICATE" }
        } catch {
            throw CourierError.invalidCertificate(reason: "malformed PEM text (\(error))")
        }
    }

    /// An ISO 8601 date for messages.
    static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
