import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The pure part of ``ConnectivityRetrier``: which failed attempts may wait for the network,
/// what a reachability status means for them, and what the wait's outcome decides. No clock, no
/// reachability manager, no I/O: every rule is tested with plain values
/// (`ConnectivityRetryRuleTests`).
struct ConnectivityRetryRule: Sendable, Equatable {
    /// The methods that may be sent again (upper case).
    var retryableMethods: Set<String>
    /// The most retries a task may have had (``SessionTask/retryCount``) for it to wait again.
    var maximumRetries: Int

    /// What to do with a failed attempt before reachability is asked.
    enum Decision: Sendable, Equatable {
        /// The attempt failed to reach the server: ask reachability, and wait if it says no route.
        case checkReachability
        /// Let the attempt's outcome stand.
        case doNotRetry(Reason)
    }

    /// Why an attempt is not waited on.
    enum Reason: Sendable, Equatable {
        /// A response arrived: the server answered, the network is there.
        case responseReceived
        /// The method is not in ``ConnectivityRetryRule/retryableMethods``.
        case methodNotRetryable
        /// The task already had ``ConnectivityRetryRule/maximumRetries`` retries.
        case retriesExhausted
        /// The failure is not one a missing route causes (a TLS failure, a protocol violation, ...).
        case notAConnectivityFailure
    }

    /// What a reachability status (the first one known) means for the attempt.
    enum StatusVerdict: Sendable, Equatable {
        /// A path exists: the failure was not the network's; don't wait.
        case reachable
        /// No path: wait for one.
        case waitForRoute
        /// Not known yet: keep listening.
        case undetermined
    }

    /// How a wait for the network ended.
    enum WaitOutcome: Sendable, Equatable {
        /// Reachability said reachable at once (the failure was not the network's).
        case alreadyReachable
        /// Reachability went from not reachable to reachable within the maximum wait.
        case becameReachable
        /// The maximum wait passed first (or no status was ever known).
        case timedOut
        /// The task was cancelled while waiting.
        case cancelled
        /// No reachability manager can be made for the request's host.
        case noReachability
    }

    /// Whether `error`, an attempt's failure before any response, is one a missing route
    /// causes: no connection could be made (no route, host or network unreachable, DNS
    /// failure, refused), or connecting timed out. Reachability tells later which of these the
    /// network caused.
    static func isConnectivityFailure(_ error: any Error) -> Bool {
        if let error = error as? CourierError {
            switch error {
            case .cannotConnect: return true
            case .timedOut(_, let reason): return reason == RetryRule.connectTimeoutReason
            case .engine(let engineError): return isConnectivityFailure(engineError)
            default: return false
            }
        }
        if let error = error as? EngineError {
            switch error {
            case .cannotConnect, .dnsFailure, .timedOut(.connect): return true
            default: return false
            }
        }
        if let error = error as? URLError {
            let codes: [URLError.Code] = [.notConnectedToInternet, .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed]
            return codes.contains(error.code)
        }
        return false
    }

    /// What to do with an attempt of `method` (nil is GET, compared without case) that failed
    /// with `error` after `retryCount` retries; `hasResponse`: a response head arrived.
    func decide(method: String?, retryCount: Int, error: any Error, hasResponse: Bool) -> Decision {
        guard !hasResponse else { return .doNotRetry(.responseReceived) }
        guard retryableMethods.contains((method ?? "GET").uppercased()) else { return .doNotRetry(.methodNotRetryable) }
        guard retryCount < maximumRetries else { return .doNotRetry(.retriesExhausted) }
        guard Self.isConnectivityFailure(error) else { return .doNotRetry(.notAConnectivityFailure) }
        return .checkReachability
    }

    /// What the first known status says: reachable (don't wait), not reachable (wait), or
    /// nothing yet (``NetworkReachabilityManager/Status/unknown``).
    static func verdict(for status: NetworkReachabilityManager.Status) -> StatusVerdict {
        switch status {
        case .reachableViaWiFi, .reachableViaWWAN: return .reachable
        case .notReachable: return .waitForRoute
        case .unknown: return .undetermined
        }
    }

    /// The retry decision once the wait ended: a retry only when the network came back.
    static func decision(after outcome: WaitOutcome) -> RetryDecision {
        outcome == .becameReachable ? .retry : .doNotRetry
    }
}
