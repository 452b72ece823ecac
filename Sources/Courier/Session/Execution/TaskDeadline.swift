import Foundation
import NIOCore

/// The one deadline of a task (``SessionConfiguration/timeoutIntervalForResource``): fixed
/// when the task starts, and the same absolute instant for every hop it sends afterwards
/// (redirects, answers to authentication challenges, retries), so the whole exchange ends by
/// it, not each hop on its own. A plain value: no clock is read but the one it is given.
struct TaskDeadline: Sendable, Equatable {
    /// The instant the task must have ended by.
    let instant: NIODeadline

    /// The deadline of a task starting at `start` with `timeout` seconds (nil for no number;
    /// zero or less, infinity and huge values as ``SessionBridge/timeAmount(_:)`` reads them).
    init?(timeout: TimeInterval, start: NIODeadline) {
        guard let amount = SessionBridge.timeAmount(timeout) else { return nil }
        self.instant = start + amount
    }

    /// The time left at `now` (zero once the deadline passed).
    func remaining(at now: NIODeadline) -> TimeAmount {
        now >= instant ? .zero : instant - now
    }

    /// Seconds to wait before a retry: `delay`, cut to the time left at `now`.
    func boundedDelay(_ delay: TimeInterval, at now: NIODeadline) -> TimeInterval {
        min(delay, Double(remaining(at: now).nanoseconds) / 1_000_000_000)
    }
}
