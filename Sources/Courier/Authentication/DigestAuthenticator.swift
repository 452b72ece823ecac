import Foundation
import Synchronization

/// A session's Digest state across requests (RFC 7616 §3.4): the nonce count sent with each
/// nonce (`00000001`, `00000002`, ...), and per origin the last challenge its credential
/// answered, so that later requests to that origin can answer it before being challenged.
/// Thread-safe; no I/O.
final class DigestAuthenticator: Sendable {
    private struct NonceKey: Hashable {
        var origin: CredentialScope.Origin
        var realm: String
        var nonce: String
    }

    private struct State {
        var counts: [NonceKey: UInt32] = [:]
        var latest: [CredentialScope.Origin: AuthenticationHeader.Challenge] = [:]
    }

    /// How many nonces' counts are kept before the ones no origin still uses are dropped.
    static let maximumNonces = 1024
    private let state = Mutex(State())

    /// The next `nc` for `nonce` in `realm` at `origin`: 1 the first time, then 2, 3, ...;
    /// nil once the 32-bit count is used up (the server must issue a new nonce).
    func nextCount(origin: CredentialScope.Origin, realm: String, nonce: String) -> UInt32? {
        state.withLock { state in
            let key = NonceKey(origin: origin, realm: realm, nonce: nonce)
            let used = state.counts[key] ?? 0
            guard used < UInt32.max else { return nil }
            if state.counts[key] == nil, state.counts.count >= Self.maximumNonces {
                let live = Set(state.latest.map { NonceKey(origin: $0.key, realm: $0.value.parameters["realm"] ?? "", nonce: $0.value.parameters["nonce"] ?? "") })
                state.counts = state.counts.filter { live.contains($0.key) }
            }
            state.counts[key] = used + 1
            return used + 1
        }
    }

    /// Remembers `challenge` (a Digest challenge with qop `auth` the session credential
    /// answered) as the one to answer ahead of time for `origin`.
    func remember(_ challenge: AuthenticationHeader.Challenge, for origin: CredentialScope.Origin) {
        let qop = (challenge.parameters["qop"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard challenge.scheme.lowercased() == "digest", qop.contains("auth") else { return }
        state.withLock { $0.latest[origin] = challenge }
    }

    /// The challenge to answer ahead of time for a request to `origin`, if one is known.
    func challenge(for origin: CredentialScope.Origin) -> AuthenticationHeader.Challenge? {
        state.withLock { $0.latest[origin] }
    }

    /// How many nonces' counts are held now (at most ``maximumNonces`` plus the live ones).
    var storedNonceCount: Int {
        state.withLock { $0.counts.count }
    }

    /// Forgets everything (the credential changed).
    func reset() {
        state.withLock { $0 = State() }
    }
}
