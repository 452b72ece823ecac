import NIOCore

/// A pooled connection's part in the pool's idle timer: since when it has been idle (nil while
/// a request or stream uses it) and whether a timer is armed for it. One timer at a time per
/// connection: a park while one is armed arms none, so whoever sees that timer fire must
/// cover the latest idle period (see `ConnectionPool.armIdleTimer`). Kept under the
/// connection's lock.
struct IdleTimerBookkeeping: Sendable {
    private(set) var idleSince: NIODeadline?
    private(set) var timerArmed = false

    /// A request or stream starts on the connection.
    mutating func markBusy() {
        idleSince = nil
    }

    /// The connection became idle at `now`; returns whether the caller must arm the timer.
    mutating func markIdle(now: NIODeadline = .now()) -> Bool {
        idleSince = now
        if timerArmed { return false }
        timerArmed = true
        return true
    }

    /// The timer fired (or its close was declined): since when the connection has been idle,
    /// the timer staying armed for the caller to re-arm; nil when busy, the timer disarmed
    /// until the next park.
    mutating func timerFired() -> NIODeadline? {
        timerArmed = idleSince != nil
        return idleSince
    }
}
