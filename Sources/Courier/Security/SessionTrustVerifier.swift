import CourierEngine
import Foundation

/// The engine's TLS hook for a session manager: the manager's server-trust block decides
/// first; when it is not set or answers ``ServerTrustDisposition/performDefaultHandling``, the
/// manager's current ``SecurityPolicy`` does (AFNetworking's task-level server-trust path).
///
/// Both are read when a new TLS connection is made, so a change applies to new connections;
/// the manager starts a fresh connection pool when its policy changes.
struct SessionTrustVerifier: ServerTrustVerifier {
    let policy: @Sendable () -> SecurityPolicy
    let handler: @Sendable () -> (@Sendable (ServerTrustChallenge) async -> ServerTrustDisposition)?
    let policyVerifier: SecurityPolicyTrustVerifier

    /// A verifier for a manager whose TLS settings are `tls`: without the system store
    /// (`trustsSystemRoots == false`) a policy with no roots of its own trusts only the extra
    /// roots.
    init(
        tls: EngineTLSConfiguration,
        policy: @escaping @Sendable () -> SecurityPolicy,
        handler: @escaping @Sendable () -> (@Sendable (ServerTrustChallenge) async -> ServerTrustDisposition)?
    ) {
        let extraRoots = tls.additionalTrustRootsDER.compactMap { try? Certificate(derBytes: $0) }
        let effectivePolicy: @Sendable () -> SecurityPolicy
        if tls.trustsSystemRoots {
            effectivePolicy = policy
        } else {
            effectivePolicy = {
                var current = policy()
                if current.trustedRootCertificates == nil { current.trustedRootCertificates = extraRoots }
                return current
            }
        }
        self.policy = effectivePolicy
        self.handler = handler
        self.policyVerifier = SecurityPolicyTrustVerifier(policy: effectivePolicy, additionalTrustRootsDER: tls.additionalTrustRootsDER)
    }

    func verify(chain: [[UInt8]], host: String) async -> ServerTrustDecision {
        if let handler = handler() {
            let certificates = chain.compactMap { try? Certificate(derBytes: $0) }
            switch await handler(ServerTrustChallenge(host: host, certificateChain: certificates)) {
            case .trust: return .trust
            case .reject(let reason): return .reject(reason: reason)
            case .performDefaultHandling: break
            }
        }
        return await policyVerifier.verify(chain: chain, host: host)
    }
}
