#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// An HTTP authentication challenge: the server answered 401 with `WWW-Authenticate`.
public struct AuthenticationChallenge: Sendable {
    /// `Basic` or `Digest` (as the server wrote it).
    public let scheme: String
    /// The `realm` parameter.
    public let realm: String?
    /// All parameters of the challenge, lowercased names.
    public let parameters: [String: String]
    /// How many times this task already answered a challenge.
    public let previousFailureCount: Int
    /// The 401 response.
    public let failureResponse: HTTPURLResponse
}

/// The answer to an ``AuthenticationChallenge`` (AFN's challenge dispositions).
public enum ChallengeDisposition: Sendable {
    /// Answer with this credential.
    case useCredential(URLCredential)
    /// Use the manager's ``URLSessionManager/credential`` if any, else deliver the 401.
    case performDefaultHandling
    /// Deliver the 401 as the response without answering.
    case rejectProtectionSpace
    /// Fail the task with ``CourierError/cancelled(url:)``.
    case cancel
}
