import CourierEngine
import Foundation

/// The pure part of ``RetryPolicy``: which attempts are retried and after how long. No clock,
/// no randomness of its own (the caller passes `now` and the jitter), no I/O, so every rule is
/// tested with plain values (`RetryRuleTests`).
enum RetryRule {
    /// The longest backoff, whatever base and scale say (a day: `base^retryCount` overflows fast).
    static let maximumBackoff: TimeInterval = 86_400
    /// The jitter adds up to this fraction of the backoff.
    static let jitterFraction: Double = 0.25

    /// `scale × base^retryCount`, plus `jitter` (0..<1) × 25 % of it, at most ``maximumBackoff``;
    /// 0 for a negative, NaN or infinite scale or base.
    static func backoff(retryCount: Int, base: Double, scale: TimeInterval, jitter: Double) -> TimeInterval {
        guard base.isFinite, scale.isFinite, base >= 0, scale >= 0 else { return 0 }
        let exponent = Double(max(0, retryCount))
        let delay = scale * pow(base, exponent)
        let clampedJitter = jitter.isFinite ? min(max(jitter, 0), 1) : 0
        let jittered = delay * (1 + clampedJitter * jitterFraction)
        guard jittered.isFinite else { return maximumBackoff }
        return min(jittered, maximumBackoff)
    }

    /// The seconds a `Retry-After` value asks for (RFC 9110 §10.2.3): a count of seconds, or an
    /// HTTP-date (the time left until it, 0 when it has passed). Nil when absent or neither.
    static func retryAfter(_ value: String?, now: Date) -> TimeInterval? {
        guard let value else { return nil }
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Digits only; a count too long for Int is "very long" (capped by the caller).
            return Int(text).map(TimeInterval.init) ?? .greatestFiniteMagnitude
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// Whether `error` is a failure where the request may be sent again without a response:
    /// the connection was lost before any byte of the response, or connecting timed out.
    /// (`hadResponse`: a head arrived, so a lost connection cut a response short: not retryable.)
    static func isRetryableFailure(_ error: any Error, hadResponse: Bool) -> Bool {
        guard !hadResponse, let error = error as? CourierError else { return false }
        switch error {
        case .connectionLost: return true
        case .timedOut(_, let reason): return reason == connectTimeoutReason
        case .engine(.connectionLost): return true
        case .engine(.timedOut(.connect)): return true
        default: return false
        }
    }

    /// How a connect timeout reads once mapped to ``CourierError/timedOut(url:reason:)``.
    static var connectTimeoutReason: String {
        if case .timedOut(_, let reason) = CourierError(EngineError.timedOut(.connect)) { return reason }
        return "connect timeout"
    }

    /// What a policy decides for one failed attempt.
    /// - Parameters:
    ///   - method: the request's method (nil is GET); compared without case.
    ///   - retryCount: the retries already made.
    ///   - error: the attempt's error.
    ///   - statusCode: the response's status, nil when no head arrived.
    ///   - retryAfter: the response's `Retry-After` value, if any.
    ///   - now: the current time, for an HTTP-date `Retry-After`.
    ///   - jitter: a value in 0..<1 (random in the policy).
    static func decide(
        method: String?, retryCount: Int, error: any Error, statusCode: Int?, retryAfter: String?, now: Date, jitter: Double,
        policy: RetryPolicy
    ) -> RetryDecision {
        guard retryCount < policy.retryLimit else { return .doNotRetry }
        guard policy.retryableMethods.contains((method ?? "GET").uppercased()) else { return .doNotRetry }
        if let statusCode {
            // A response came: only a retryable status, and only when nothing else failed.
            guard policy.retryableStatusCodes.contains(statusCode) else { return .doNotRetry }
            if let error = error as? CourierError, case .unacceptableStatusCode = error {} else { return .doNotRetry }
        } else if !isRetryableFailure(error, hadResponse: false) {
            return .doNotRetry
        }
        if let seconds = Self.retryAfter(retryAfter, now: now) {
            return .retryWithDelay(min(seconds, max(0, policy.maximumRetryAfter)))
        }
        return .retryWithDelay(
            backoff(retryCount: retryCount, base: policy.exponentialBackoffBase, scale: policy.exponentialBackoffScale, jitter: jitter))
    }
}
