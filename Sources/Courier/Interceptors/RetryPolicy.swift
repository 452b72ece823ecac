public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Retries failed attempts that are safe to send again (Alamofire's `RetryPolicy`): up to
/// `retryLimit` retries of an idempotent method, after a retryable status (408, 429, 500, 502,
/// 503, 504) or a failure before any response byte (a connection lost before the response, a
/// connect timeout); never a POST or PATCH by default, never a response cut short.
///
/// The delay before retry `n` (0-based) is `exponentialBackoffScale × exponentialBackoffBase^n`
/// plus a random jitter of up to 25 %, or the response's `Retry-After` (seconds or HTTP-date)
/// when it has one, at most `maximumRetryAfter`. A body that can't be sent again (a stream with
/// no way to make it afresh) is never retried: the session checks that before each retry.
///
/// Use it as ``URLSessionManager/interceptor`` or per request, alone or in an ``Interceptor``.
public struct RetryPolicy: RequestInterceptor {
    /// The most retries per task (so at most `retryLimit + 1` attempts). Default 2.
    public let retryLimit: Int
    /// The backoff's base. Default 2.
    public let exponentialBackoffBase: Double
    /// The backoff's scale, in seconds. Default 0.5.
    public let exponentialBackoffScale: TimeInterval
    /// The methods that may be retried (upper case). Default the idempotent ones.
    public let retryableMethods: Set<String>
    /// The statuses that may be retried. Default 408, 429, 500, 502, 503, 504.
    public let retryableStatusCodes: Set<Int>
    /// The longest `Retry-After` honoured; a longer one waits this long. Default 60 s.
    public let maximumRetryAfter: TimeInterval

    /// A policy; every parameter has the default described on its property. Methods are
    /// matched without case.
    public init(
        retryLimit: Int = 2, exponentialBackoffBase: Double = 2, exponentialBackoffScale: TimeInterval = 0.5,
        retryableMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"],
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504], maximumRetryAfter: TimeInterval = 60
    ) {
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableMethods = Set(retryableMethods.map { $0.uppercased() })
        self.retryableStatusCodes = retryableStatusCodes
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// Decides with `RetryRule.decide(method:retryCount:error:statusCode:retryAfter:now:jitter:policy:)`
    /// for the request the task last sent.
    public func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision {
        RetryRule.decide(
            method: task.currentRequest?.httpMethod, retryCount: task.retryCount, error: error,
            statusCode: response?.statusCode, retryAfter: response?.value(forHTTPHeaderField: "Retry-After"), now: Date(),
            jitter: Double.random(in: 0..<1), policy: self)
    }
}
