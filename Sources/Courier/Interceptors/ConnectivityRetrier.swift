public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Retries a request once the network is back: when an attempt fails to reach the server (no
/// route, host or network unreachable, a DNS failure, a refused or timed-out connect) and
/// reachability says there is no path to the host, it waits until there is one (at most
/// ``maximumWait``), then sends the request again.
///
/// Reachability is a ``NetworkReachabilityManager`` for the request's host (made for the wait,
/// stopped after it), or the one given to ``init(maximumWait:maximumRetries:retryableMethods:reachabilityManager:onWaiting:)``.
/// What it decides:
/// - a response arrived (a server error included): never waits, the network is there;
/// - reachability says the host is reachable: doesn't wait (``RetryDecision/doNotRetry``), the
///   failure was not the network's;
/// - not reachable: waits for the next status that is reachable, then ``RetryDecision/retry``;
///   after ``maximumWait`` without one, ``RetryDecision/doNotRetry`` (the attempt's error stands);
/// - only ``retryableMethods`` (the idempotent ones by default: never a POST or PATCH), and only
///   while the task has had fewer than ``maximumRetries`` retries (``SessionTask/retryCount``,
///   every interceptor's retries counted), so it can't loop.
///
/// Cancelling the task ends the wait at once: the task completes cancelled. The task's resource
/// deadline (``SessionConfiguration/timeoutIntervalForResource``) does not: no exchange runs
/// while it waits, and a retry after the deadline ends at once with the deadline's timeout. Keep
/// ``maximumWait`` within the deadline. Reachability is asked about the URL's host, also when a
/// proxy or a connect-to override sends the connection elsewhere.
///
/// With ``RetryPolicy`` in an ``Interceptor``, put it first: each failure is offered to it, and
/// what it does not retry (every server error, every failure while the network is there) goes on
/// to the policy:
///
/// ```swift
/// manager.interceptor = Interceptor([ConnectivityRetrier(maximumWait: 30), RetryPolicy()])
/// ```
public struct ConnectivityRetrier: RequestInterceptor {
    /// The methods retried by default: GET, HEAD, OPTIONS, PUT, DELETE, TRACE.
    public static let defaultRetryableMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]

    /// The longest wait for the network, in seconds, per failed attempt. Default 30.
    public let maximumWait: TimeInterval
    /// The most retries a task may have had (``SessionTask/retryCount``) for it to wait again.
    /// Default 1: one wait and one retry per task.
    public let maximumRetries: Int
    /// The methods that may be retried (upper case). Default ``defaultRetryableMethods``.
    public let retryableMethods: Set<String>
    /// The manager asked about every request's reachability; nil: one for each request's host.
    public let reachabilityManager: NetworkReachabilityManager?
    /// Called when a task starts waiting for the network (then reachability said not reachable).
    let onWaiting: (@Sendable (SessionTask) -> Void)?

    /// A retrier.
    /// - Parameters:
    ///   - maximumWait: the longest wait for the network per failed attempt, in seconds
    ///     (negative or not finite: 0, no wait).
    ///   - maximumRetries: the most retries a task may have had for it to wait again.
    ///   - retryableMethods: the methods that may be retried, matched without case.
    ///   - reachabilityManager: the manager to ask (it is started if it has no status yet, and
    ///     left running); nil makes one for each request's host, for the wait only.
    ///   - onWaiting: called (on no particular thread) when a task starts waiting, to say so.
    public init(
        maximumWait: TimeInterval = 30, maximumRetries: Int = 1, retryableMethods: Set<String> = ConnectivityRetrier.defaultRetryableMethods,
        reachabilityManager: NetworkReachabilityManager? = nil, onWaiting: (@Sendable (SessionTask) -> Void)? = nil
    ) {
        self.maximumWait = maximumWait.isFinite ? max(0, maximumWait) : 0
        self.maximumRetries = maximumRetries
        self.retryableMethods = Set(retryableMethods.map { $0.uppercased() })
        self.reachabilityManager = reachabilityManager
        self.onWaiting = onWaiting
    }

    /// The pure rule these settings make.
    var rule: ConnectivityRetryRule {
        ConnectivityRetryRule(retryableMethods: retryableMethods, maximumRetries: maximumRetries)
    }

    /// ``RetryDecision/retry`` when the attempt failed to reach the server, reachability said
    /// there was no path, and one came within ``maximumWait``; otherwise ``RetryDecision/doNotRetry``.
    public func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision {
        let request = task.currentRequest
        let decision = rule.decide(
            method: request?.httpMethod, retryCount: task.retryCount, error: error, hasResponse: response != nil)
        guard decision == .checkReachability else { return .doNotRetry }
        let outcome: ConnectivityRetryRule.WaitOutcome
        if let reachabilityManager {
            outcome = await ConnectivityWait.wait(
                on: reachabilityManager, startsMonitoring: reachabilityManager.status == .unknown, maximumWait: maximumWait
            ) { onWaiting?(task) }
        } else if let manager = ConnectivityWait.manager(forHost: request?.url?.host) {
            outcome = await ConnectivityWait.wait(on: manager, startsMonitoring: true, maximumWait: maximumWait) { onWaiting?(task) }
            manager.stopMonitoring()
        } else {
            outcome = .noReachability
        }
        return ConnectivityRetryRule.decision(after: outcome)
    }
}
