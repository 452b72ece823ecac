import X509

/// The path a server's certificates actually form from the leaf, by issuer name and signature,
/// when no chain to a trust anchor was validated (public-key pinning with
/// ``SecurityPolicy/allowInvalidCertificates``): what SecTrust's chain holds after a failed
/// evaluation, and what AFNetworking's public-key mode walks.
///
/// Certificates the server sent that did not sign the path (a victim's genuine certificate
/// appended to an attacker's leaf, or one that only carries the right issuer *name*) are not
/// part of it, so a pin can't match them.
///
/// Pure logic, no I/O.
enum PresentedChainLinkage {
    /// The most certificates the path holds (leaf included). OpenSSL's default verify depth is
    /// 100; real paths are 2 to 5 long. The cap bounds the signature checks a hostile chain can
    /// cause to `maximumLength × sent.count`.
    static let maximumLength = 32

    /// The leaf, then each sent certificate whose subject is the previous one's issuer and whose
    /// key verifies the previous one's signature, until none does.
    ///
    /// - Parameter sent: The certificates as the server sent them, leaf first, in any order after it.
    /// - Returns: The linked path, leaf first; empty only when `sent` is empty. Each certificate
    ///   of `sent` is used at most once.
    static func linkedChain(_ sent: [Certificate]) -> [Certificate] {
        guard let leaf = sent.first else { return [] }
        var path = [leaf]
        var remaining = Array(sent.dropFirst())
        var tip = leaf.x509
        while path.count < maximumLength,
            let index = remaining.firstIndex(where: { candidate in
                candidate.x509.subject == tip.issuer && candidate.x509.publicKey.isValidSignature(tip.signature, for: tip)
            })
        {
            let issuer = remaining.remove(at: index)
            path.append(issuer)
            tip = issuer.x509
        }
        return path
    }
}
