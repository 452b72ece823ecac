#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// Adapts a request before it is sent and decides whether a failed attempt is sent again
/// (Alamofire's `RequestAdapter` and `RequestRetrier` together; OkHttp's interceptors).
///
/// Set one for every task of a manager (``URLSessionManager/interceptor``) or for one request
/// (``URLSessionManager/dataTask(with:interceptor:uploadProgress:downloadProgress:completionHandler:)``,
/// ``URLSessionManager/data(for:interceptor:)``, and the `interceptor:` argument of every typed
/// async verb, `response(for:…)` and `HTTPRequest` call, and of the transfers: `transfer`,
/// `upload`, `download`); with both, the manager's runs first (see ``Interceptor``). Both
/// methods have defaults: implement the one you need.
///
/// Threading: both methods run in a Swift task of their own, never on an event loop, and
/// different tasks' calls run concurrently: an interceptor must be thread-safe.
public protocol RequestInterceptor: Sendable {
    /// The request to send for `task`'s next attempt (called before the first attempt and
    /// before each retry, with the request the task last sent). Default: unchanged.
    ///
    /// When a redirect took the last request to another origin than the one this last adapted
    /// for (the server's choice), the retry is sent there without the
    /// ``RedirectRule/crossOriginSensitiveHeaders`` (`Authorization`, `Proxy-Authorization`,
    /// `Cookie`) whatever this adds, as on the redirect itself; a retry this moves to another
    /// origin (a fail-over mirror) keeps what this adds, but never the session's answer to a
    /// challenge at the first origin.
    /// - Throws: any error; the task then fails with that error, and nothing is sent.
    func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest

    /// Whether `task` is sent again after `error`. `response` is the attempt's response when a
    /// head arrived (`error` is then ``CourierError/unacceptableStatusCode(response:data:underlying:)``
    /// for a status outside 200..<400, or the failure that ended its body), nil when the attempt
    /// failed before any response. ``SessionTask/retryCount`` says how many retries came before.
    /// Default: ``RetryDecision/doNotRetry``.
    func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision
}

extension RequestInterceptor {
    /// Returns `request` unchanged.
    public func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest { request }

    /// Returns ``RetryDecision/doNotRetry``.
    public func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision {
        .doNotRetry
    }
}
