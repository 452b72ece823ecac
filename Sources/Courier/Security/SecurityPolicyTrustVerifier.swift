import CourierEngine
import Foundation
import X509

/// Adapts a ``SecurityPolicy`` to the engine's TLS hook.
///
/// The engine calls ``verify(chain:host:)`` once per new TLS connection with the chain the server
/// sent (leaf first, DER) and the host the request named. The chain is parsed into
/// ``Certificate``s and judged by the policy that `policy` returns at that moment (so a session
/// can change its policy between connections), with the domain set to the host. Anchors are the
/// policy's ``SecurityPolicy/trustedRootCertificates`` or, when nil, the system store plus the
/// engine's extra roots. A rejection carries the specific reason; ``CourierError``'s message
/// puts AFNetworking's task-error sentence in front of it.
struct SecurityPolicyTrustVerifier: ServerTrustVerifier {
    private let policy: @Sendable () -> SecurityPolicy
    /// The engine's extra roots, trusted with the system store. The system store
    /// (`CertificateStore.systemTrustRoots`, parsed once per process by swift-certificates, in
    /// the background, on first use: ~7 ms of CPU) is touched only by a verification, so a
    /// session that never makes a TLS connection never parses it.
    private let additionalRoots: [X509.Certificate]

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - policy: Returns the policy to apply; called once per verification.
    ///   - additionalTrustRootsDER: Extra anchors trusted with the system store when the policy's
    ///     ``SecurityPolicy/trustedRootCertificates`` is nil (the engine's
    ///     `EngineTLSConfiguration.additionalTrustRootsDER`). Bytes that are not a certificate
    ///     can anchor nothing and are skipped.
    init(policy: @escaping @Sendable () -> SecurityPolicy, additionalTrustRootsDER: [[UInt8]]) {
        self.policy = policy
        self.additionalRoots = additionalTrustRootsDER.compactMap { try? X509.Certificate(derEncoded: $0) }
    }

    func verify(chain: [[UInt8]], host: String) async -> ServerTrustDecision {
        var certificates: [Certificate] = []
        certificates.reserveCapacity(chain.count)
        for (index, der) in chain.enumerated() {
            do {
                certificates.append(try Certificate(derBytes: der))
            } catch {
                let detail = (error as? CourierError)?.description ?? "\(error)"
                return .reject(reason: "certificate #\(index + 1) of the chain can't be parsed: \(detail)")
            }
        }
        let policy = self.policy()
        let roots =
            policy.trustedRootCertificates.map { CertificateStore($0.map(\.x509)) }
            ?? CertificateStore.systemTrustRoots.appending(contentsOf: additionalRoots)
        let evaluation = await policy.evaluation(serverChain: certificates, forDomain: host, at: Date(), trustRoots: roots)
        switch evaluation {
        case .trusted: return .trust
        case .rejected(let reason): return .reject(reason: reason)
        }
    }
}
