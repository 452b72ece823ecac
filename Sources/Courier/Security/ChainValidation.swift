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
/// certificate at `time`; RFC 5280 path rules (basic constraints, name constraints, version); and,
/// with a host, the leaf's names (RFC 6125, IP literals against IP addresses) and its extended key
/// usage (`serverAuth`). Without a host this is AFN's basic X.509 policy: no name and no
/// extended-key-usage check.
///
/// A certificate that is itself an anchor (a pinned or trusted leaf, even self-signed and not a
/// CA) validates as a chain of one: swift-certificates' `RFC5280Policy` would refuse a non-CA
/// anchor, so such a chain gets the date and name checks only.
enum ChainValidation {
    static func validate(
        _ chain: [Certificate],
        anchors: CertificateStore,
        host: String?,
        at time: Date
    ) async -> ChainValidationResult {
        guard let leaf = chain.first else { return .invalid(reason: nil) }
        let intermediates = CertificateStore(chain.dropFirst().map(\.x509))
        var verifier = Verifier(rootCertificates: anchors) {
            ValidityPeriodPolicy(validationTime: time)
            ChainStructurePolicy(validationTime: time)
            if let host {
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
/// Declares extended key usage handled: ``ServerNamePolicy`` enforces it when a host is checked,
/// and AFN's basic X.509 policy (no host) ignores it.
struct ChainStructurePolicy: VerifierPolicy {
    private var rfc5280: RFC5280Policy

    init(validationTime: Date) {
        rfc5280 = RFC5280Policy(fixedExpiryValidationTime: validationTime)
    }

    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] {
        rfc5280.verifyingCriticalExtensions + [.X509ExtensionID.extendedKeyUsage]
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        // A chain of one is a leaf found in the anchor store itself: the caller trusts that exact
        // certificate, so CA rules don't apply (dates and names are other policies' business).
        if chain.count == 1 { return .meetsPolicy }
        switch rfc5280.chainMeetsPolicyRequirements(chain: chain) {
        case .meetsPolicy:
            return .meetsPolicy
        case .failsToMeetPolicy(let reason):
            let text = reason.description
            return .failsToMeetPolicy(reason: "certificate chain is invalid: \(text)")
        }
    }
}

/// The leaf must name the host (RFC 6125; IP literals against IP addresses) and, if it restricts
/// its extended key usage, allow TLS server authentication.
struct ServerNamePolicy: VerifierPolicy {
    let host: String
    private var identity: ServerIdentityPolicy

    init(host: String) {
        self.host = host
        var bare = Substring(host)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        let name = String(bare)
        let isIPAddress = (try? SocketAddress(ipAddress: name, port: 0)) != nil
        identity = ServerIdentityPolicy(serverHostname: isIPAddress ? nil : name, serverIP: isIPAddress ? name : nil)
    }

    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] {
        identity.verifyingCriticalExtensions + [.X509ExtensionID.extendedKeyUsage]
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
        switch identity.chainMeetsPolicyRequirements(chain: chain) {
        case .meetsPolicy:
            return .meetsPolicy
        case .failsToMeetPolicy(let reason):
            let host = self.host
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
