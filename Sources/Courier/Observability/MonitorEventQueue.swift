import Dispatch
import NIOCore
import Synchronization

/// Where a session's event monitors are called while its tasks run: one serial queue per
/// manager, off the event loops, drained in batches.
///
/// A task's engine events may then be handled right where the engine delivers them (an event
/// loop), monitors or not: handling only collects the monitor calls, and at the end of each
/// burst of events the task's calls come here as one job (``TaskCallbackQueue/tellMonitors(_:canWait:)``),
/// so a task's calls keep their order. A burst that ends the task sends nothing here: its end
/// makes them where it finishes. Jobs queued while the queue is being drained ride along with
/// that drain: many tasks' calls cost one thread wake, where a hop per task to its own queue
/// woke a thread per request.
///
/// A task ends only after its jobs here were made (its end then starts from here), so a monitor
/// has heard everything of an awaited call before the call returns. A slow monitor holds up the
/// monitor calls of every task of its session (as Alamofire's monitor queue does), never an
/// event loop.
final class MonitorEventQueue: Sendable {
    typealias Job = @Sendable () -> Void

    private struct State {
        var pending = CircularBuffer<Job>(initialCapacity: 16)
        /// The dispatch queue is draining `pending` (or about to).
        var draining = false
    }

    private let state = Mutex(State())
    /// Its own queue, targeting an overcommitting root queue: a monitor that blocks takes one
    /// thread, never the cooperative pool's or an event loop's.
    private let queue = DispatchQueue(label: "courier.monitors")

    init() {}

    /// Runs `job` on the monitor queue after everything queued before it.
    func async(_ job: @escaping Job) {
        let start = state.withLock { state -> Bool in
            state.pending.append(job)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// Runs what is queued, a batch at a time (one lock per batch, not per call), until nothing
    /// is left.
    private func drain() {
        var batch = CircularBuffer<Job>(initialCapacity: 16)
        while true {
            let more = state.withLock { state -> Bool in
                guard !state.pending.isEmpty else {
                    state.draining = false
                    return false
                }
                swap(&batch, &state.pending)
                return true
            }
            guard more else { return }
            while let job = batch.popFirst() { job() }
        }
    }
}
