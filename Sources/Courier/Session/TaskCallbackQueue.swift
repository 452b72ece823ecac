import CourierEngine
import Dispatch
import Synchronization

/// A task's own serial queue: the engine's events for the task are handled here, so every
/// user callback (progress blocks, the manager's hooks, event monitors) and the session's own
/// blocking work for the task (cookie-store writes, file opens) runs off the event loop, one at
/// a time and in the order the events happened. A slow callback holds up only its own task.
///
/// Backpressure: when more than 4 MiB of response body waits here (a callback slower than the
/// network), the engine stops reading the task's socket until the queue is down to 1 MiB.
final class TaskCallbackQueue: Sendable {
    private static let pauseAbove = 4 << 20
    private static let resumeBelow = 1 << 20

    private struct Backlog {
        var bytes = 0
        /// The backlog when reading was last paused (0: not paused by this queue).
        var pausedAt = 0
    }

    private let queue: DispatchQueue
    private let backlog = Mutex(Backlog())

    init(label: String) {
        // A serial queue of its own targets an overcommitting root queue: a callback that
        // blocks takes one thread, never the cooperative pool's or an event loop's.
        queue = DispatchQueue(label: label)
    }

    /// Runs `work` after everything queued before it.
    func async(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Queues `event` for `handle`. `setReadingPaused` stops (true) or restarts (false) the
    /// engine's reading of the response; it is called on the event loop or this queue.
    func deliver(
        _ event: EngineEvent,
        setReadingPaused: @escaping @Sendable (Bool) -> Void,
        to handle: @escaping @Sendable (EngineEvent) -> Void
    ) {
        guard case .bodyPart(let buffer) = event else {
            queue.async { handle(event) }
            return
        }
        let count = buffer.readableBytes
        let pause = backlog.withLock { backlog -> Bool in
            backlog.bytes += count
            // Pause again if reading was restarted behind our back (a resumed task) and the
            // backlog kept growing.
            guard backlog.bytes > Self.pauseAbove, backlog.pausedAt == 0 || backlog.bytes > backlog.pausedAt + Self.pauseAbove
            else { return false }
            backlog.pausedAt = backlog.bytes
            return true
        }
        if pause { setReadingPaused(true) }
        queue.async {
            handle(event)
            let resume = self.backlog.withLock { backlog -> Bool in
                backlog.bytes -= count
                guard backlog.pausedAt > 0, backlog.bytes < Self.resumeBelow else { return false }
                backlog.pausedAt = 0
                return true
            }
            if resume { setReadingPaused(false) }
        }
    }
}
