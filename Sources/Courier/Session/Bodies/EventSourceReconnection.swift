import CourierEngine
import Foundation

/// The reconnection rules of an ``EventSource`` as a value: what to do with each response
/// head, connection failure and end of stream, and what the next request carries. No clock,
/// no randomness of its own (the caller passes the jitter, 0..<1), no I/O: `EventSource` feeds
/// it events and carries out its decisions.
///
/// The rules (the HTML standard's `EventSource`, plus a backoff browsers leave out):
/// - `200` with `text/event-stream`: read the events; the failures in a row go back to zero.
/// - `204 No Content`: the server says stop; the sequence ends.
/// - `5xx`, `408`, `429`, and connection errors (can't connect, lost, timed out): try again
///   after the backoff, reconnection time × multiplier^(n−1) for the n-th failure in a row
///   (the reconnection time at least 100 ms here), capped, less a random share (the jitter);
///   a `Retry-After` asks for at least its delay (up to an hour).
/// - Any other status, or `200` with another content type: fail (no retry can help).
/// - The stream ends, normally or broken off: reconnect after the reconnection time (`retry:`
///   or the configured one); a stream that delivered no event counts as a failure instead, so
///   a server that accepts and hangs up at once is met with the backoff.
/// - After ``EventSourceConfiguration/maximumConsecutiveFailures`` failures in a row: fail.
struct EventSourceReconnection: Sendable {
    /// What to do next.
    enum Decision: Sendable, Equatable {
        /// The response is an event stream: read it.
        case stream
        /// Connect again after the delay.
        case reconnect(after: Duration)
        /// The host is unreachable: wait up to the duration for reachability to say it can be
        /// reached, then connect again at once.
        case waitForConnectivity(atMost: Duration)
        /// Stop: the sequence ends without an error (`204`).
        case finish
        /// Stop: the sequence throws the failure at hand.
        case fail
    }

    /// How a failure is met.
    enum FailureKind: Sendable, Equatable {
        /// Worth another attempt: the connection broke, timed out or could not be made.
        case transient
        /// As `transient`, and the host could not be reached: reachability is worth asking.
        case unreachable
        /// The consumer stopped (the task was cancelled).
        case cancelled
        /// Another attempt can't help (TLS rejected, a bad request, an event too long, ...).
        case fatal
    }

    /// The wait backoff starts from, whatever `retry:` says (`retry: 0` must not make a
    /// failing server be hammered).
    static let minimumBackoffBase: Duration = .milliseconds(100)
    /// The longest `Retry-After` honoured.
    static let maximumRetryAfter: Duration = .seconds(3600)

    let initialReconnectionTime: Duration
    let maximumReconnectionDelay: Duration
    let backoffMultiplier: Double
    let jitter: Double
    let maximumConsecutiveFailures: Int?
    let waitsForConnectivity: Duration?

    /// The last event ID: sent as `Last-Event-ID` when not empty. Empty before any.
    private(set) var lastEventID: String
    /// The wait before reconnecting after a stream ends: `retry:` or the configured one.
    private(set) var reconnectionTime: Duration
    /// Failed attempts since the last stream that was accepted.
    private(set) var consecutiveFailures = 0
    /// Connection attempts after the first.
    private(set) var reconnections = 0
    /// The wait the latest decision chose before connecting again (nil before any).
    private(set) var lastDelay: Duration?
    private var attempts = 0
    private var eventsOnThisConnection = 0

    init(configuration: EventSourceConfiguration, lastEventID: String? = nil) {
        initialReconnectionTime = configuration.initialReconnectionTime
        maximumReconnectionDelay = configuration.maximumReconnectionDelay
        backoffMultiplier = configuration.backoffMultiplier
        jitter = configuration.jitter
        maximumConsecutiveFailures = configuration.maximumConsecutiveFailures
        waitsForConnectivity = configuration.waitsForConnectivity
        self.lastEventID = lastEventID ?? ""
        reconnectionTime = max(.zero, configuration.initialReconnectionTime)
    }

    // MARK: - Requests

    /// The fields each attempt sets: `Accept: text/event-stream`, `Cache-Control: no-cache`,
    /// and `Last-Event-ID` when there is one (nil: remove the field).
    var requestFields: [(name: String, value: String?)] {
        [
            ("Accept", "text/event-stream"),
            ("Cache-Control", "no-cache"),
            ("Last-Event-ID", lastEventID.isEmpty ? nil : lastEventID),
        ]
    }

    /// An attempt starts.
    mutating func attemptStarting() {
        attempts += 1
        if attempts > 1 { reconnections += 1 }
        eventsOnThisConnection = 0
    }

    // MARK: - Events

    /// A response head arrived.
    /// - Parameters:
    ///   - status: its status code.
    ///   - mimeType: its media type without parameters (any case), nil when it names none.
    ///   - retryAfter: its `Retry-After`, as a delay, nil when it has none.
    ///   - jitter: a random number in 0..<1.
    mutating func responseArrived(status: Int, mimeType: String?, retryAfter: Duration?, jitter: Double) -> Decision {
        switch status {
        case 200:
            guard mimeType?.lowercased() == "text/event-stream" else { return .fail }
            consecutiveFailures = 0
            return .stream
        case 204:
            return .finish
        case 408, 429, 500...599:
            return failed(jitter: jitter, retryAfter: retryAfter)
        default:
            return .fail
        }
    }

    /// A connection attempt failed before any response head.
    /// - Parameters:
    ///   - kind: how the failure is met (``failureKind(of:)``).
    ///   - reachability: what reachability says of the host now, nil when not watched.
    ///   - jitter: a random number in 0..<1.
    mutating func connectFailed(_ kind: FailureKind, reachability: NetworkReachabilityManager.Status?, jitter: Double) -> Decision {
        switch kind {
        case .cancelled, .fatal:
            return .fail
        case .transient, .unreachable:
            let decision = failed(jitter: jitter, retryAfter: nil)
            guard case .reconnect = decision, kind == .unreachable, let bound = waitsForConnectivity, reachability == .notReachable
            else { return decision }
            lastDelay = bound
            return .waitForConnectivity(atMost: bound)
        }
    }

    /// A `retry:` field: the new reconnection time, at most an hour (as `Retry-After`): a
    /// server's `retry: 99999999999999` must not park the client for centuries, nor overflow
    /// the sleep's nanoseconds).
    mutating func retryField(milliseconds: Int) {
        reconnectionTime = min(.milliseconds(max(0, milliseconds)), Self.maximumRetryAfter)
    }

    /// An empty line dispatched an event (`delivered` when it had data and reached the
    /// consumer); `lastEventID` is the stream's last event ID then (nil: none seen yet).
    mutating func eventDispatched(lastEventID: String?, delivered: Bool) {
        if let lastEventID { self.lastEventID = lastEventID }
        if delivered { eventsOnThisConnection += 1 }
    }

    /// The stream of an accepted response ended: normally (`failure` nil) or with the failure's kind.
    mutating func streamEnded(_ failure: FailureKind?, jitter: Double) -> Decision {
        switch failure {
        case .cancelled?, .fatal?:
            return .fail
        case nil, .transient?, .unreachable?:
            guard eventsOnThisConnection > 0 else { return failed(jitter: jitter, retryAfter: nil) }
            lastDelay = reconnectionTime
            return .reconnect(after: reconnectionTime)
        }
    }

    // MARK: - Rules

    /// One more failure in a row: the backoff, or `.fail` past the limit.
    private mutating func failed(jitter random: Double, retryAfter: Duration?) -> Decision {
        consecutiveFailures += 1
        if let limit = maximumConsecutiveFailures, consecutiveFailures > limit { return .fail }
        var delay = Self.backoff(
            failures: consecutiveFailures, base: reconnectionTime, multiplier: backoffMultiplier, maximum: maximumReconnectionDelay,
            jitter: jitter, random: random)
        if let retryAfter { delay = max(delay, min(retryAfter, Self.maximumRetryAfter)) }
        lastDelay = delay
        return .reconnect(after: delay)
    }

    /// base × multiplier^(failures−1) (base at least ``minimumBackoffBase``), at most `maximum`,
    /// less `jitter` × `random` of it.
    static func backoff(failures: Int, base: Duration, multiplier: Double, maximum: Duration, jitter: Double, random: Double) -> Duration {
        let baseSeconds = seconds(max(base, minimumBackoffBase))
        let maximumSeconds = max(0, seconds(maximum))
        let factor = multiplier.isFinite && multiplier >= 1 ? pow(multiplier, Double(max(0, failures - 1))) : 1
        var delay = min(maximumSeconds, baseSeconds * factor)
        if !delay.isFinite { delay = maximumSeconds }
        let share = (jitter.isFinite ? min(max(jitter, 0), 1) : 0) * (random.isFinite ? min(max(random, 0), 1) : 0)
        return .milliseconds(Int64((delay * (1 - share) * 1000).rounded()))
    }

    /// How an error of a connection attempt or of a stream is met.
    static func failureKind(of error: any Error) -> FailureKind {
        if error is CancellationError { return .cancelled }
        guard let error = error as? CourierError else { return .fatal }
        switch error {
        case .cancelled: return .cancelled
        case .cannotConnect: return .unreachable
        case .timedOut(_, let reason): return reason == RetryRule.connectTimeoutReason ? .unreachable : .transient
        case .connectionLost: return .transient
        case .engine(.connectionLost): return .transient
        case .engine(.timedOut(.connect)): return .unreachable
        case .engine(.timedOut): return .transient
        default: return .fatal
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
