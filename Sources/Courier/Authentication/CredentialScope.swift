import Foundation

/// Where a credential may be sent: the origin (scheme, host, port) of the request it was given
/// for, and, once a server has named it, the protection space's realm. Pure values.
struct CredentialScope: Sendable, Hashable {
    /// RFC 6454 origin: lowercased scheme and host, and the port (the scheme's default when absent).
    struct Origin: Sendable, Hashable, CustomStringConvertible {
        var scheme: String
        var host: String
        var port: Int

        /// The origin of `url`, or nil without a scheme or host.
        init?(_ url: URL?) {
            guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
                return nil
            }
            let defaultPort: Int? =
                switch scheme {
                case "http": 80
                case "https": 443
                default: nil
                }
            guard let port = url.port ?? defaultPort else { return nil }
            self.scheme = scheme
            self.host = host
            self.port = port
        }

        var description: String { "\(scheme)://\(host):\(port)" }
    }

    var origin: Origin
    /// The realm, once known; nil matches any realm at the origin.
    var realm: String?

    /// Whether a challenge from `url` in `realm` lies in this scope.
    func covers(_ url: URL?, realm: String?) -> Bool {
        guard let other = Origin(url), other == origin else { return false }
        guard let bound = self.realm else { return true }
        return bound == realm
    }
}

/// Picks the challenge to answer among those a 401 offered: the strongest supported one,
/// Digest SHA-256 over Digest MD5 over Basic, among the schemes allowed. Pure.
enum ChallengeSelection {
    /// The strength of `challenge` as Courier can answer it, or nil when it can't be answered.
    static func strength(of challenge: AuthenticationHeader.Challenge) -> Int? {
        switch challenge.scheme.lowercased() {
        case "basic":
            return 1
        case "digest":
            guard challenge.parameters["realm"] != nil, challenge.parameters["nonce"] != nil,
                let algorithm = DigestAlgorithm(challenge)
            else { return nil }
            if let qop = challenge.parameters["qop"] {
                let options = qop.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard options.contains("auth") else { return nil }
            }
            return algorithm == .sha256 ? 3 : 2
        default:
            return nil
        }
    }

    /// The scheme set `challenge` belongs to (nil for schemes Courier doesn't answer).
    static func scheme(of challenge: AuthenticationHeader.Challenge) -> AuthenticationSchemes? {
        switch challenge.scheme.lowercased() {
        case "basic": .basic
        case "digest": .digest
        default: nil
        }
    }

    /// The strongest challenge in `challenges` whose scheme is in `allowed` (the first of equals).
    static func strongest(
        _ challenges: [AuthenticationHeader.Challenge], allowed: AuthenticationSchemes = .all
    ) -> AuthenticationHeader.Challenge? {
        var best: (challenge: AuthenticationHeader.Challenge, strength: Int)?
        for challenge in challenges {
            guard let scheme = scheme(of: challenge), allowed.contains(scheme), let strength = strength(of: challenge) else {
                continue
            }
            if strength > (best?.strength ?? 0) { best = (challenge, strength) }
        }
        return best?.challenge
    }
}
