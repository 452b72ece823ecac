import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1

/// The task's side of authentication: answering a 401 (the challenge block, or the session
/// credential within its scope and schemes) and answering a known Digest challenge ahead of
/// time. The rules live in ``AuthenticationAttempts``, ``ChallengeSelection``,
/// ``CredentialScope``, ``DigestAuthenticator`` and ``AuthenticationHeader``; this only runs them
/// with the task's state. Runs on the task's callback queue.
extension TaskDelegate {
    /// The retry answering a 401, or nil to deliver it: every challenge of every
    /// `WWW-Authenticate` field is read, the strongest one Courier supports is offered to the
    /// challenge block, and the default handling answers with the session credential only in
    /// its scope and schemes (see ``AuthenticationAttempts`` and ``URLSessionManager/credential``).
    func authenticationRetry(
        for request: URLRequest, head: HTTPResponseHead, response: () -> HTTPURLResponse?
    ) -> URLRequest? {
        let challenges = AuthenticationHeader.challenges(in: head.headers["www-authenticate"])
        let attempts = run.withLock { $0.authentication }
        guard !attempts.exhausted, let offered = ChallengeSelection.strongest(challenges) else { return nil }
        if let (stale, answer) = attempts.staleRetry(challenges, url: request.url) {
            return answered(request, challenge: stale, answer: answer, isStaleRetry: true)
        }
        var disposition = ChallengeDisposition.performDefaultHandling
        if let hook = environment.hooks.taskDidReceiveChallenge {
            guard let failureResponse = response() else { return nil }
            let challenge = AuthenticationChallenge(
                scheme: offered.scheme,
                realm: offered.parameters["realm"],
                parameters: offered.parameters,
                previousFailureCount: attempts.failures,
                failureResponse: failureResponse
            )
            disposition = hook(task, challenge)
        }
        let credential: URLCredential?
        let chosen: AuthenticationHeader.Challenge?
        let isSessionCredential: Bool
        switch disposition {
        case .useCredential(let given):
            (credential, chosen, isSessionCredential) = (given, offered, false)
        case .performDefaultHandling:
            let allowed = ChallengeSelection.strongest(challenges, allowed: environment.credentialSchemes)
            let applies = attempts.sessionCredentialApplies(
                originalURL: task.originalRequest?.url, url: request.url, realm: allowed?.parameters["realm"])
            (credential, chosen, isSessionCredential) = applies ? (environment.credential, allowed, true) : (nil, nil, true)
        case .rejectProtectionSpace:
            return nil
        case .cancel:
            run.withLock { $0.machine.challengeCancelled() }
            return nil
        }
        guard let credential, let chosen, let user = credential.user, let password = credential.password,
            let origin = CredentialScope.Origin(request.url)
        else { return nil }
        let answer = AuthenticationAttempts.Answer(
            scope: CredentialScope(origin: origin, realm: chosen.parameters["realm"]),
            isDigest: chosen.scheme.lowercased() == "digest", user: user, password: password,
            isSessionCredential: isSessionCredential)
        return answered(request, challenge: chosen, answer: answer, isStaleRetry: false)
    }

    /// `request` with the `Authorization` answering `challenge` with `answer`'s credential
    /// (recorded in the task's attempts), or nil when it can't be answered.
    func answered(
        _ request: URLRequest, challenge: AuthenticationHeader.Challenge, answer: AuthenticationAttempts.Answer,
        isStaleRetry: Bool, aheadOfTime: Bool = false
    ) -> URLRequest? {
        let authorization: String?
        if answer.isDigest {
            guard let realm = challenge.parameters["realm"], let nonce = challenge.parameters["nonce"],
                let count = environment.digestAuthenticator.nextCount(origin: answer.scope.origin, realm: realm, nonce: nonce)
            else { return nil }
            authorization = AuthenticationHeader.digest(
                challenge, user: answer.user, password: answer.password, method: request.httpMethod ?? "GET",
                uri: AuthenticationHeader.requestTarget(of: request.url), nonceCount: count, clientNonce: AuthenticationHeader.makeClientNonce())
            if authorization != nil, answer.isSessionCredential {
                environment.digestAuthenticator.remember(challenge, for: answer.scope.origin)
            }
        } else {
            authorization = AuthenticationHeader.basic(user: answer.user, password: answer.password)
        }
        guard let authorization else { return nil }
        run.withLock {
            $0.authentication.record(answer, stale: isStaleRetry, aheadOfTime: aheadOfTime)
            $0.answeredAuthorization = (authorization, answer.scope.origin)
        }
        var retry = request
        retry.setValue(authorization, forHTTPHeaderField: "Authorization")
        return retry
    }

    /// `request` answering ahead of time the Digest challenge the session credential last
    /// answered at its origin, so the nonce is reused with the next `nc`: only for a request
    /// without an `Authorization` of its own, to the origin of the task's original request,
    /// with Digest among the credential's schemes.
    func authorizedAheadOfTime(_ request: URLRequest) -> URLRequest {
        // The session credential first: without one (most sessions) nothing else is looked at,
        // and the two origins (URL parsing) were ~1% of a small GET's CPU.
        guard let credential = environment.credential, let user = credential.user, let password = credential.password,
            environment.credentialSchemes.contains(.digest),
            request.value(forHTTPHeaderField: "Authorization") == nil,
            let origin = CredentialScope.Origin(request.url), origin == CredentialScope.Origin(task.originalRequest?.url),
            let challenge = environment.digestAuthenticator.challenge(for: origin)
        else { return request }
        let scope = CredentialScope(origin: origin, realm: challenge.parameters["realm"])
        let applies = run.withLock {
            $0.authentication.sessionCredentialApplies(
                originalURL: task.originalRequest?.url, url: request.url, realm: scope.realm)
        }
        guard applies else { return request }
        let answer = AuthenticationAttempts.Answer(
            scope: scope, isDigest: true, user: user, password: password, isSessionCredential: true)
        return answered(request, challenge: challenge, answer: answer, isStaleRetry: false, aheadOfTime: true) ?? request
    }
}
