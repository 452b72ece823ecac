/// What a ``SecurityPolicy`` pins: AFN's `AFSSLPinningMode`.
public enum SSLPinningMode: Sendable, Hashable, CaseIterable {
    /// No pinning: the chain must lead to a trusted root (`AFSSLPinningModeNone`).
    case none
    /// A certificate of the validated chain (leaf to trust anchor) must carry the public key of a
    /// pinned certificate (`AFSSLPinningModePublicKey`); other certificates the server sends
    /// never match. Survives certificate renewal with the same key.
    case publicKey
    /// The chain must validate with only the pinned certificates as anchors, and contain one of
    /// them (`AFSSLPinningModeCertificate`).
    case certificate
}
