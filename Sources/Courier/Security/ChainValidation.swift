import Foundation
import NIOCore
import SwiftASN1
// The SPI is swift-certificates' documented way to validate against a fixed (injected) time.
@_spi(FixedExpiryValidationTime) import X509

/// What building and checking a chain with swift-certificates found.
enum ChainValidationResult: Sendable {
    /// A chain from the leaf to an anchor meets every policy; certificates leaf first, anchor last.
    case valid([X509.Certificate])
    /// No acceptable chain. `reason` is the first policy failure of a chain that reached an
    /// anchor, or nil when no chain reached any anchor.
    case invalid(reason: String?)
}

/// SecTrust's evaluation, translated to swift-certificates: build a chain from the leaf through
/// the other certificates the server sent to one of `anchors`, and check it.
///
/// The checks, in order (the first failure names the rejection): validity dates of every
/// certificate at `time`; RFC 5280 path rules (every issuer below the anchor an X.509 version 3
/// CA, then swift-certificates' basic constraints, name constraints and version rules); and, for
/// a TLS server (``ServerCheck/tlsServer(host:)``, SecPolicyCreateSSL), the leaf's extended key
/// usage (`serverAuth`) and, with a host, its names (RFC 6125, IP literals against IP
/// addresses). ``ServerCheck/basicX509`` is AFN's basic X.509 policy: no name and no
/// extended-key-usage check.
///
/// Issuers: swift-certificates' `RFC5280Policy` lets an X.509 version 1 certificate issue
/// certificates ("basic constraints don't apply"), which RFC 5280 6.1.4 (k) allows only after an
/// out-of-band check and curl/OpenSSL refuse for intermediates. So every certificate between the
/// leaf and the anchor must be version 3 with basic constraints `cA` true, unless
/// `allowsLegacyV1Issuers`. The anchor itself (a trusted root or a certificate pin the caller
/// configured) is trusted as given (RFC 5280 6.1.1 d), version 1 included; a version 3 anchor
/// that issues must still say it is a CA (swift-certificates' rule, kept).
///
/// A certificate that is itself an anchor (a pinned or trusted leaf, even self-signed and not a
/// CA) validates as a chain of one: swift-certificates' `RFC5280Policy` would refuse a non-CA
/// anchor, so such a chain gets the date and name checks only.
enum ChainValidation {
    /// Which SecTrust policy the chain is checked under (AFN step 2).
    enum ServerCheck: Sendable, Hashable {
        /// `SecPolicyCreateBasicX509()`: the chain only.
        case basicX509
        /// `SecPolicyCreateSSL(true, host)`: the chain, the leaf's `serverAuth` usage and, when
        /// `host` is not nil, its names.
        case tlsServer(host: String?)
    }

    static func validate(
        _ chain: [Certificate],
        anchors: CertificateStore,
        check: ServerCheck,
        allowsLegacyV1Issuers: Bool,
        at time: Date
    ) async -> ChainValidationResult {
        guard let leaf = chain.first else { return .invalid(reason: nil) }
        let intermediates = CertificateStore(chain.dropFirst().map(\.x509))
        var verifier = Verifier(rootCertificates: anchors) {
            ValidityPeriodPolicy(validationTime: time)
            ChainStructurePolicy(validationTime: time, allowsLegacyV1Issuers: allowsLegacyV1Issuers)
            if case .tlsServer(let host) = check {
                ServerNamePolicy(host: host)
            }
        }
        switch await verifier.validate(leaf: leaf.x509, intermediates: intermediates) {
        case .validCertificate(let validated):
            return .valid(Array(validated))
        case .couldNotValidate(let failures):
            return .invalid(reason: failures.first.map { $0.policyFailureReason.description })
        }
    }
}

// MARK: - Policies

/// Every certificate of the chain must be valid at `validationTime`; names the one that is not.
struct ValidityPeriodPolicy: VerifierPolicy {
    let validationTime: Date

    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] { [] }

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        for certificate in chain {
            let subject = certificate.subject.description
            if validationTime > certificate.notValidAfter {
                let end = Certificate.format(certificate.notValidAfter)
                return .failsToMeetPolicy(reason: "certificate has expired: \(subject) was valid until \(end)")
            }
            if validationTime < certificate.notValidBefore {
                let start = Certificate.format(certificate.notValidBefore)
                return .failsToMeetPolicy(reason: "certificate is not yet valid: \(subject) is valid from \(start)")
            }
        }
        return .meetsPolicy
    }
}

/// RFC 5280 path rules for chains of two or more; a single certificate is its own anchor.
///
/// Every certificate strictly between the leaf and the anchor must be an X.509 version 3
/// certificate (swift-certificates treats version 1 as a CA; see ``ChainValidation``) unless
/// `allowsLegacyV1Issuers`; then swift-certificates' `RFC5280Policy` checks basic constraints
/// (`cA` true, path length), name constraints and versions.
///
/// Declares extended key usage and subject alternative names handled: ``ServerNamePolicy``
/// enforces both for TLS servers (the names only with a host), AFN's basic X.509 policy ignores
/// them, and name constraints read the names. Otherwise a leaf whose names sit in a critical
/// extension (required when its subject is empty, RFC 5280 4.2.1.6) could not be validated
/// without a host name check.
struct ChainStructurePolicy: VerifierPolicy {
    private var rfc5280: RFC5280Policy
    private let allowsLegacyV1Issuers: Bool

    init(validationTime: Date, allowsLegacyV1Issuers: Bool) {
        rfc5280 = RFC5280Policy(fixedExpiryValidationTime: validationTime)
        self.allowsLegacyV1Issuers = allowsLegacyV1Issuers
    }

    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] {
        rfc5280.verifyingCriticalExtensions + [.X509ExtensionID.extendedKeyUsage, .X509ExtensionID.subjectAlternativeName]
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        // A chain of one is a leaf found in the anchor store itself: the caller trusts that exact
        // certificate, so CA rules don't apply (dates and names are other policies' business).
        if chain.count == 1 { return .meetsPolicy }
        if !allowsLegacyV1Issuers {
            // The issuers the server supplied: after the leaf, before the anchor.
            for issuer in chain.dropFirst().dropLast() where issuer.version < .v3 {
                let subject = issuer.subject.description
                let version = issuer.version == .v1 ? "1" : "2"
                return .failsToMeetPolicy(
                    reason:
                        "certificate chain is invalid: \(subject) is an X.509 version \(version) certificate, which has no basic constraints and can't act as a CA (RFC 5280 6.1.4); set allowsLegacyV1Issuers on the SecurityPolicy to accept it"
                )
            }
        }
        switch rfc5280.chainMeetsPolicyRequirements(chain: chain) {
        case .meetsPolicy:
            return .meetsPolicy
        case .failsToMeetPolicy(let reason):
            let text = reason.description
            return .failsToMeetPolicy(reason: "certificate chain is invalid: \(text)")
        }
    }
}

/// The leaf must, if it restricts its extended key usage, allow TLS server authentication and,
/// with a host, name it (RFC 6125; IP literals against IP addresses).
struct ServerNamePolicy: VerifierPolicy {
    let host: String?
    private var identity: ServerIdentityPolicy?

    init(host: String?) {
        self.host = host
        guard let host else {
            identity = nil
            return
        }
        var bare = Substring(host)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        let name = String(bare)
        let isIPAddress = (try? SocketAddress(ipAddress: name, port: 0)) != nil
        identity = ServerIdentityPolicy(serverHostname: isIPAddress ? nil : name, serverIP: isIPAddress ? name : nil)
    }

    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] {
        (identity?.verifyingCriticalExtensions ?? []) + [.X509ExtensionID.extendedKeyUsage]
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let leaf = chain.leaf
        let subject = leaf.subject.description
        do {
            if let usage = try leaf.extensions.extendedKeyUsage, !usage.contains(.serverAuth), !usage.contains(.any) {
                return .failsToMeetPolicy(
                    reason: "certificate is not for TLS servers: \(subject) lacks the serverAuth extended key usage"
                )
            }
        } catch {
            let text = "\(error)"
            return .failsToMeetPolicy(reason: "certificate has an unreadable extended key usage: \(text)")
        }
        guard var identity, let host else { return .meetsPolicy }
        defer { self.identity = identity }
        switch identity.chainMeetsPolicyRequirements(chain: chain) {
        case .meetsPolicy:
            return .meetsPolicy
        case .failsToMeetPolicy(let reason):
            let names = Self.names(of: leaf)
            let detail = names.isEmpty ? reason.description : "its names: \(names.joined(separator: ", "))"
            return .failsToMeetPolicy(
                reason: "host name does not match: the certificate \(subject) is not valid for “\(host)” (\(detail))"
            )
        }
    }

    /// The DNS names and IP addresses of the leaf's subject alternative names.
    private static func names(of certificate: X509.Certificate) -> [String] {
        guard let alternativeNames = try? certificate.extensions.subjectAlternativeNames else { return [] }
        return alternativeNames.compactMap { name in
            switch name {
            case .dnsName(let dnsName): return dnsName
            case .ipAddress(let octets): return format(ipAddress: Array(octets.bytes))
            default: return nil
            }
        }
    }

    private static func format(ipAddress bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return bytes.map { String($0, radix: 16) }.joined(separator: ":") }
        let groups = stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":")
    }
}
