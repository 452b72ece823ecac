public import Foundation

/// What a ``RequestInterceptor`` decided after a failed attempt.
public enum RetryDecision: Sendable {
    /// Send the request again now.
    case retry
    /// Send the request again after this many seconds (negative or not finite: now).
    case retryWithDelay(TimeInterval)
    /// Let the attempt's outcome be the task's.
    case doNotRetry
    /// Do not retry; the task fails with this error instead of the attempt's.
    case doNotRetryWithError(any Error)

    /// The delay before the next attempt, nil when there is none (a decision not to retry).
    var retryDelay: TimeInterval? {
        switch self {
        case .retry: return 0
        case .retryWithDelay(let delay): return delay.isFinite ? max(0, delay) : 0
        case .doNotRetry, .doNotRetryWithError: return nil
        }
    }
}
