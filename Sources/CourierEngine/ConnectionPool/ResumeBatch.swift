import NIOCore
import NIOPosix

/// Resumes the awaiting callers of requests that end on an event loop together, after the
/// loop's current work, instead of one at a time as each response ends.
///
/// Why: resuming a continuation enqueues the caller's task on Swift's cooperative pool, and
/// when the pool's threads are idle every enqueue wakes one (a futex call on each side, a
/// context switch). Responses ending one by one in the middle of a read left the pool time to
/// drain and sleep between them: perf counted ~0.9 wake-ups per request at 64 in flight over
/// HTTP/2, a tenth of the event loop's time. Resumed back to back at the end of the tick, one
/// wake-up serves a whole batch. The delay is the rest of the current loop tick.
///
/// Off an event loop (a cancellation from the caller's thread) the resume runs at once.
/// Thread-confined: each event loop thread has its own batch (`ThreadSpecificVariable`), only
/// ever touched on that thread; hence `@unchecked Sendable`.
package final class ResumeBatch: @unchecked Sendable {
    private static let perThread = ThreadSpecificVariable<ResumeBatch>()

    /// The resumes waiting for the drain (queued by the run that found this empty).
    private var pending: [() -> Void] = []

    /// Runs `resume` after the current loop tick when called on an event loop, else now.
    package static func run(_ resume: @escaping () -> Void) {
        guard let loop = MultiThreadedEventLoopGroup.currentEventLoop else {
            resume()
            return
        }
        let batch: ResumeBatch
        if let existing = perThread.currentValue {
            batch = existing
        } else {
            batch = ResumeBatch()
            perThread.currentValue = batch
        }
        batch.pending.append(resume)
        guard batch.pending.count == 1 else { return }
        loop.assumeIsolated().execute { batch.drain() }
    }

    private func drain() {
        // Swapped out, so a resume that leads to another one on this thread lands in the next
        // batch rather than in the array being walked; its storage is reused afterwards.
        var work: [() -> Void] = []
        swap(&work, &pending)
        for resume in work {
            resume()
        }
        if pending.isEmpty {
            work.removeAll(keepingCapacity: true)
            pending = work
        }
    }
}
