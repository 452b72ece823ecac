import Foundation

/// One task's answers to authentication challenges, and the rules that decide the next one.
/// Pure value; the task keeps it under its lock.
///
/// - At most ``maximumAnswers`` answers per task, whatever the challenge block says: a server
///   that keeps answering 401 ends with its 401, not a loop.
/// - The session credential answers only a task's first failure-free challenge, and only from
///   the origin of the task's original request (and, once it has answered one, only that
///   realm): a redirect to another origin never receives it.
/// - A Digest answer refused with `stale=true` (the nonce expired, the password was right) is
///   sent again once with the new nonce, and that refusal is not counted as a failure.
struct AuthenticationAttempts: Sendable {
    /// One answer the task sent.
    struct Answer: Sendable {
        /// The origin and realm it answered.
        var scope: CredentialScope
        var isDigest: Bool
        var user: String
        var password: String
        /// Whether it was the session's credential (not one from the challenge block).
        var isSessionCredential: Bool
    }

    /// The most answers to challenges one task sends, stale retries included (answers sent
    /// ahead of time, before any challenge, are not counted).
    static let maximumAnswers = 5

    /// Answers sent so far.
    private(set) var answers = 0
    /// Answers that were refused (or led elsewhere): not stale retries, not answers sent
    /// ahead of a challenge. What the challenge block sees as `previousFailureCount`.
    private(set) var failures = 0
    private(set) var staleRetried = false
    /// The last answer sent.
    private(set) var last: Answer?
    /// Where the session credential was first used in this task (origin and realm).
    private(set) var sessionScope: CredentialScope?

    /// Whether the task may send no more answers.
    var exhausted: Bool { answers >= Self.maximumAnswers }

    /// The Digest challenge to answer again, with the last answer's credential, when a 401 to
    /// `url` offering `challenges` says the nonce of that answer (in the same origin and realm)
    /// was stale; nil otherwise, or after one stale retry already.
    func staleRetry(
        _ challenges: [AuthenticationHeader.Challenge], url: URL?
    ) -> (challenge: AuthenticationHeader.Challenge, answer: Answer)? {
        guard !staleRetried, !exhausted, let last, last.isDigest else { return nil }
        let stale = challenges.filter {
            $0.scheme.lowercased() == "digest" && $0.parameters["stale"]?.lowercased() == "true"
                && last.scope.covers(url, realm: $0.parameters["realm"])
        }
        guard let chosen = ChallengeSelection.strongest(stale, allowed: .digest) else { return nil }
        return (chosen, last)
    }

    /// Whether the session credential may answer a challenge in `realm` from `url`, for a task
    /// whose original request went to `originalURL`.
    func sessionCredentialApplies(originalURL: URL?, url: URL?, realm: String?) -> Bool {
        guard failures == 0, !exhausted, let origin = CredentialScope.Origin(originalURL) else { return false }
        let scope = sessionScope ?? CredentialScope(origin: origin, realm: nil)
        return scope.covers(url, realm: realm)
    }

    /// Records an answer. `counted` is false for a stale retry and for an answer sent before
    /// any challenge (ahead of time).
    mutating func record(_ answer: Answer, stale: Bool = false, aheadOfTime: Bool = false) {
        if !aheadOfTime { answers += 1 }
        if stale { staleRetried = true }
        if !stale && !aheadOfTime { failures += 1 }
        if answer.isSessionCredential && sessionScope == nil { sessionScope = answer.scope }
        last = answer
    }
}
