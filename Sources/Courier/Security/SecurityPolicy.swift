public import Foundation
import X509

/// Decides whether a server's certificate chain is trusted: AFNetworking's `AFSecurityPolicy`,
/// on swift-certificates instead of Apple's `SecTrust`.
///
/// The decision follows `-evaluateServerTrust:forDomain:` step by step:
///
/// 1. A domain, ``allowInvalidCertificates`` and ``validatesDomainName`` together, without
///    pinning (mode ``SSLPinningMode/none`` or no pinned certificate): rejected, with AFN's
///    message ``domainValidationRequiresPinningMessage``.
/// 2. The chain is validated against ``trustedRootCertificates`` (nil: the system store). With
///    ``validatesDomainName`` (AFN's `SecPolicyCreateSSL(true, domain)`) the leaf must also allow
///    TLS server use (extended key usage) and, when a domain is given, name it; without it
///    (`SecPolicyCreateBasicX509()`) only the chain is checked.
/// 3. Mode ``SSLPinningMode/none``: trusted when the chain is valid, or always with
///    ``allowInvalidCertificates``.
/// 4. A pinning mode without ``allowInvalidCertificates`` needs a valid chain first.
/// 5. ``SSLPinningMode/certificate``: the chain is validated again with **only** the pinned
///    certificates as anchors (a pinned leaf, intermediate, root or self-signed certificate),
///    so an expired certificate or a wrong host still fails, even with
///    ``allowInvalidCertificates``; then some certificate of that chain must equal a pinned one.
///    ``SSLPinningMode/publicKey``: some certificate of the chain validated in step 2, leaf to
///    trust anchor (so a root the server does not send counts), must carry the public key
///    (SubjectPublicKeyInfo) of a pinned certificate. Certificates the server sent that are not
///    on that path never match: an attacker with a valid certificate for the host from any
///    trusted CA can't pass by appending the victim's genuine certificate. With
///    ``allowInvalidCertificates`` and no valid chain, the path is the one the sent
///    certificates form from the leaf by issuer name **and** signature (what SecTrust's chain
///    holds); there is no second chain check, so a self-signed, expired or wrong-host chain whose
///    path carries a pinned key passes (AFN's documented behaviour).
///
/// Issuers: every certificate between the leaf and the trust anchor must be an X.509 version 3
/// CA (basic constraints `cA` true), as RFC 5280 requires and curl enforces; version 1
/// certificates, which can't say whether they are CAs, are refused as issuers unless
/// ``allowsLegacyV1Issuers``. Anchors (``trustedRootCertificates``, the system store, pinned
/// certificates in certificate mode) are trusted as given, version 1 roots included.
///
/// The policy is a value and does no I/O; ``evaluation(serverChain:forDomain:at:)`` is async only
/// because swift-certificates' chain building is.
public struct SecurityPolicy: Sendable, Hashable {
    /// What is pinned. Default ``SSLPinningMode/none``.
    public var pinningMode: SSLPinningMode

    /// The certificates pinned (certificate mode) or whose public keys are pinned (public-key
    /// mode). Default empty.
    public var pinnedCertificates: Set<Certificate>

    /// Whether a chain that does not validate is accepted (AFN's self-signed/expired escape hatch).
    /// Default false. With ``validatesDomainName`` it requires pinning (step 1).
    public var allowInvalidCertificates: Bool = false

    /// Whether the certificate must name the domain being connected to. Default true.
    public var validatesDomainName: Bool = true

    /// The anchors chains must lead to. Nil (the default): the system trust store,
    /// `/etc/ssl/certs/ca-certificates.crt` on Debian (AFN's "system trust").
    public var trustedRootCertificates: [Certificate]?

    /// Whether an X.509 version 1 (or 2) certificate may act as an intermediate CA. Default false.
    ///
    /// Such certificates have no extensions, so nothing says they are CAs: RFC 5280 (6.1.4 k)
    /// allows them as issuers only after an out-of-band check, and curl (OpenSSL) refuses them.
    /// By default a chain through one is rejected with `certificate chain is invalid: … X.509
    /// version 1 …`. Set this to true only for a legacy private PKI you know. It does not affect
    /// trust anchors: a version 1 root in ``trustedRootCertificates`` or the system store, or a
    /// pinned version 1 certificate in certificate mode, is trusted as given either way.
    public var allowsLegacyV1Issuers: Bool = false

    /// AFN's log message for step 1.
    public static let domainValidationRequiresPinningMessage =
        "In order to validate a domain name for self signed certificates, you MUST use pinning."

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - pinningMode: What to pin.
    ///   - pinnedCertificates: The certificates (or their keys) to pin; ignored in mode ``SSLPinningMode/none``.
    public init(pinningMode: SSLPinningMode, pinnedCertificates: Set<Certificate> = []) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
    }

    /// AFN's `+defaultPolicy`: no pinning, invalid certificates refused, domain name checked,
    /// system trust store.
    public static var `default`: SecurityPolicy { SecurityPolicy(pinningMode: .none) }

    /// Whether `serverChain` is trusted for `domain`: ``evaluation(serverChain:forDomain:at:)``
    /// is ``ServerTrustEvaluation/trusted``.
    ///
    /// - Parameters:
    ///   - serverChain: The certificates the server sent, leaf first.
    ///   - domain: The host connected to (a name or an IP literal); nil skips the name check.
    ///   - time: The moment validity periods are checked against. Default now.
    public func evaluate(serverChain: [Certificate], forDomain domain: String?, at time: Date = Date()) async -> Bool {
        await evaluation(serverChain: serverChain, forDomain: domain, at: time) == .trusted
    }

    /// Evaluates `serverChain` for `domain` and says why it is rejected.
    ///
    /// - Parameters:
    ///   - serverChain: The certificates the server sent, leaf first.
    ///   - domain: The host connected to (a name or an IP literal); nil skips the name check.
    ///   - time: The moment validity periods are checked against. Default now.
    /// - Returns: ``ServerTrustEvaluation/trusted``, or ``ServerTrustEvaluation/rejected(reason:)``
    ///   with a specific reason (`certificate has expired: …`, `host name does not match: …`,
    ///   `chain does not lead to a trusted root`, …).
    public func evaluation(
        serverChain: [Certificate],
        forDomain domain: String?,
        at time: Date = Date()
    ) async -> ServerTrustEvaluation {
        let roots = trustedRootCertificates.map { CertificateStore($0.map(\.x509)) } ?? CertificateStore.systemTrustRoots
        return await evaluation(serverChain: serverChain, forDomain: domain, at: time, trustRoots: roots)
    }

    /// The decision table, with the anchors of steps 2–4 given (the TLS adapter adds extra roots
    /// to the system store).
    func evaluation(
        serverChain: [Certificate],
        forDomain domain: String?,
        at time: Date,
        trustRoots: CertificateStore
    ) async -> ServerTrustEvaluation {
        // Step 1.
        if domain != nil, allowInvalidCertificates, validatesDomainName,
            pinningMode == .none || pinnedCertificates.isEmpty
        {
            return .rejected(reason: Self.domainValidationRequiresPinningMessage)
        }
        guard !serverChain.isEmpty else {
            return .rejected(reason: "the server sent no certificate")
        }

        // Step 3 with allowInvalidCertificates needs no chain check at all.
        if pinningMode == .none, allowInvalidCertificates { return .trusted }

        // Step 2: SecPolicyCreateSSL(true, domain) or SecPolicyCreateBasicX509(). Skipped when
        // nothing would read it (certificate pinning that allows invalid chains).
        let check: ChainValidation.ServerCheck = validatesDomainName ? .tlsServer(host: domain) : .basicX509
        let systemCheck: ChainValidationResult
        if allowInvalidCertificates, pinningMode == .certificate {
            systemCheck = .invalid(reason: "not evaluated")
        } else {
            systemCheck = await ChainValidation.validate(
                serverChain,
                anchors: trustRoots,
                check: check,
                allowsLegacyV1Issuers: allowsLegacyV1Issuers,
                at: time
            )
        }
        let chainError: String?
        switch systemCheck {
        case .valid: chainError = nil
        case .invalid(let reason): chainError = reason ?? Self.untrustedChainReason(serverChain)
        }

        // Step 3.
        if pinningMode == .none {
            return chainError.map { .rejected(reason: $0) } ?? .trusted
        }
        // Step 4.
        if !allowInvalidCertificates, let chainError {
            return .rejected(reason: chainError)
        }

        // Step 5.
        switch pinningMode {
        case .none:
            return .trusted  // handled by step 3
        case .certificate:
            return await certificatePinEvaluation(serverChain, check: check, at: time)
        case .publicKey:
            // Only the path to the anchor; never any other certificate the server sent.
            let candidates: [[UInt8]]
            if case .valid(let validated) = systemCheck {
                // Includes the root a server doesn't send.
                candidates = validated.compactMap { try? Certificate.subjectPublicKeyInfoDER(of: $0) }
            } else {
                // Only with allowInvalidCertificates (step 4).
                candidates = PresentedChainLinkage.linkedChain(serverChain).map(\.publicKeyDER)
            }
            let pinnedKeys = Set(pinnedCertificates.map(\.publicKeyDER))
            if candidates.contains(where: pinnedKeys.contains) { return .trusted }
            return .rejected(reason: "no public key in the chain matches a pinned key")
        }
    }

    /// Why no chain reached a trusted root, naming where the sent chain ends.
    static func untrustedChainReason(_ chain: [Certificate]) -> String {
        let base = "chain does not lead to a trusted root"
        guard let top = chain.last else { return base }
        if top.issuerSummary == top.subjectSummary {
            return "\(base) (\(top.subjectSummary) is self-signed)"
        }
        return "\(base) (the chain sent ends at \(top.subjectSummary), issued by \(top.issuerSummary))"
    }

    /// Step 5, certificate mode: the pinned certificates are the only anchors.
    private func certificatePinEvaluation(
        _ serverChain: [Certificate],
        check: ChainValidation.ServerCheck,
        at time: Date
    ) async
        -> ServerTrustEvaluation
    {
        let noMatch = "no certificate in the chain matches a pinned certificate"
        guard !pinnedCertificates.isEmpty else {
            return .rejected(reason: "\(noMatch) (no certificate is pinned)")
        }
        let anchors = CertificateStore(pinnedCertificates.map(\.x509))
        let validation = await ChainValidation.validate(
            serverChain,
            anchors: anchors,
            check: check,
            allowsLegacyV1Issuers: allowsLegacyV1Issuers,
            at: time
        )
        switch validation {
        case .invalid(let reason):
            return .rejected(reason: reason ?? noMatch)
        case .valid(let validated):
            // Root to leaf, as AFN walks it.
            for certificate in validated.reversed() {
                if pinnedCertificates.contains(where: { $0.x509 == certificate }) {
                    return .trusted
                }
            }
            return .rejected(reason: noMatch)
        }
    }
}
