/// What a ``SecurityPolicy`` pins: AFN's `AFSSLPinningMode`.
public enum SSLPinningMode: Sendable, Hashable, CaseIterable {
    /// No pinning: the chain must lead to a trusted root (`AFSSLPinningModeNone`).
    case none
    /// A certificate of the chain must carry the public key of a pinned certificate
    /// (`AFSSLPinningModePublicKey`). Survives certificate renewal with the same key.
    case publicKey
    /// The chain must validate with only the pinned certificates as anchors, and contain one of
    /// them (`AFSSLPinningModeCertificate`).
    case certificate
}
