/// The outcome of ``SecurityPolicy/evaluation(serverChain:forDomain:at:)``: trusted, or rejected
/// with the reason in words.
public enum ServerTrustEvaluation: Sendable, Hashable, CustomStringConvertible {
    /// The chain is acceptable for the domain.
    case trusted
    /// The chain is not acceptable; `reason` says why (for example `certificate has expired: …`).
    case rejected(reason: String)

    /// Whether the evaluation is ``trusted``.
    public var isTrusted: Bool { self == .trusted }

    /// The rejection reason, nil when trusted.
    public var rejectionReason: String? {
        if case .rejected(let reason) = self { return reason }
        return nil
    }

    /// `trusted`, or `rejected: <reason>`.
    public var description: String {
        switch self {
        case .trusted: return "trusted"
        case .rejected(let reason): return "rejected: \(reason)"
        }
    }
}
