import CourierEngine
import Dispatch
import NIOCore
import Synchronization

/// A task's own serial executor: the engine's events for the task are handled here, one at a
/// time and in the order they happened, and so is the session's own work for the task
/// (serializer, completion, cookie-store writes, file opens).
///
/// Where the work runs: on the task's dispatch queue, off the event loop, so user callbacks
/// (progress blocks, the manager's hooks) never run on (or hold up) an event
/// loop and a slow callback holds up only its own task. An event whose handling calls no user
/// code may instead be handled right where it is delivered (`inline: true`: the event loop),
/// which saves a thread hop per request; it still waits behind anything queued before it, and
/// an event delivered while another is being handled (on any thread, or re-entrantly) is
/// handled after it, by the thread already handling.
///
/// Work queued together is handled in one batch: one dispatch hop per burst of events (a
/// small response's head, body and end arrive together), not one per event. A metrics snapshot
/// (``EngineEvent/metricsUpdated(_:)``) starts no batch: it rides with the exchange's next event.
///
/// Backpressure: when more than 4 MiB of response body waits here (a callback slower than the
/// network), the engine stops reading the task's socket until the queue is down to 1 MiB.
///
/// Event monitors: their calls never run here (an event may be handled on an event loop).
/// Calls made while a burst is handled wait for its end (handled inline on an event loop: for
/// the end of the loop's current work, since the rest of the read may end the task), then go to
/// the session's ``MonitorEventQueue`` as one job; the task's end takes what is still waiting
/// and makes those calls where it finishes (``takeMonitorCalls()``). So an awaited small
/// request, whose head, body and end come in one read, costs its monitors no thread hop.
final class TaskCallbackQueue: Sendable {
    /// Calls to the event monitors, made together.
    typealias MonitorCalls = @Sendable () -> Void
    private static let pauseAbove = 4 << 20
    private static let resumeBelow = 1 << 20

    private struct Job {
        let run: @Sendable () -> Void
        /// Whether it may run on the delivering thread (it calls no user code).
        let inline: Bool
    }

    private struct State {
        var pending = CircularBuffer<Job>(initialCapacity: 4)
        /// A thread (inline) or the dispatch queue is handling `pending`.
        var draining = false
        /// Body bytes queued and not handled yet.
        var bytes = 0
        /// The backlog when reading was last paused (0: not paused by this queue).
        var pausedAt = 0
        /// Monitor calls made during the burst being handled (or earlier, when they could
        /// wait for the next one), oldest first.
        var monitorCalls: [MonitorCalls] = []
        /// Whether one of `monitorCalls` must be made at the end of the burst.
        var monitorCallsDue = false
        /// A send of `monitorCalls` waits for the end of the event loop's current work.
        var monitorFlushScheduled = false
        /// This task's jobs on the monitor queue not made yet.
        var monitorJobs = 0
    }

    private let label: String
    /// Made on first use: a task whose events are all handled inline (an awaited small
    /// request) never needs it, and making and freeing one showed in its profile (~0.6 µs).
    private let lazyQueue = AtomicLazyReference<DispatchQueue>()
    private let state = Mutex(State())
    /// Whether reading is paused by this queue as last told to the engine. Held while telling
    /// it, so a pause and a resume decided on two threads reach the engine in an order that
    /// leaves it as the backlog says (a resume overtaking its pause left reading paused for good).
    private let appliedPause = Mutex(false)

    /// The session's queue for monitor calls that can't wait for the task's end.
    private let monitorQueue: MonitorEventQueue

    init(label: String, monitorQueue: MonitorEventQueue = MonitorEventQueue()) {
        self.label = label
        self.monitorQueue = monitorQueue
    }

    /// The task's serial queue. One of its own targets an overcommitting root queue: a callback
    /// that blocks takes one thread, never the cooperative pool's or an event loop's.
    private var queue: DispatchQueue {
        lazyQueue.load() ?? lazyQueue.storeIfNil(DispatchQueue(label: label))
    }

    /// Runs `work` on the task's dispatch queue after everything queued before it.
    func async(_ work: @escaping @Sendable () -> Void) {
        enqueue(Job(run: work, inline: false))
    }

    /// Queues `event` for `handle`. `setReadingPaused` stops (true) or restarts (false) the
    /// engine's reading of the response; it is called on the delivering thread or where the
    /// events are handled. `inline`: `handle` calls no user code for this event, so it may run
    /// on the delivering thread when nothing is queued before it.
    func deliver(
        _ event: EngineEvent,
        inline: Bool = false,
        setReadingPaused: @escaping @Sendable (Bool) -> Void,
        to handle: @escaping @Sendable (EngineEvent) -> Void
    ) {
        // Nothing queued or being handled, and reading not held back: handle it here and now,
        // without queueing a job (the common case of an awaited small request: its head, body
        // and end each arrive to an idle queue). A body chunk needs no backlog accounting then:
        // it would be counted and uncounted around this very call.
        if inline, state.withLock({ state in
            guard !state.draining, state.pending.isEmpty, state.pausedAt == 0 else { return false }
            state.draining = true
            return true
        }) {
            handle(event)
            drain(inline: true)  // what arrived meanwhile (re-entrantly or from another thread)
            return
        }
        if case .metricsUpdated = event {
            // Starts no thread hop of its own: it waits for the exchange's next event (every
            // exchange has one: its head, its end) and is handled just before it. A task with
            // event monitors then takes no more hops than one without.
            state.withLock { $0.pending.append(Job(run: { handle(event) }, inline: inline)) }
            return
        }
        guard case .bodyPart(let buffer) = event else {
            enqueue(Job(run: { handle(event) }, inline: inline))
            return
        }
        let count = buffer.readableBytes
        let pause = state.withLock { state -> Bool in
            state.bytes += count
            // Pause again if reading was restarted behind our back (a resumed task) and the
            // backlog kept growing.
            guard state.bytes > Self.pauseAbove, state.pausedAt == 0 || state.bytes > state.pausedAt + Self.pauseAbove
            else { return false }
            state.pausedAt = state.bytes
            return true
        }
        if pause { applyPause(setReadingPaused) }
        enqueue(
            Job(
                run: {
                    handle(event)
                    let resume = self.state.withLock { state -> Bool in
                        state.bytes -= count
                        guard state.pausedAt > 0, state.bytes < Self.resumeBelow else { return false }
                        state.pausedAt = 0
                        return true
                    }
                    if resume { self.applyPause(setReadingPaused) }
                },
                inline: inline))
    }

    /// Tells the engine whether to read, as the backlog now says (paused while `pausedAt` is
    /// set), unless it was already told so.
    private func applyPause(_ setReadingPaused: (Bool) -> Void) {
        appliedPause.withLock { applied in
            let wanted = state.withLock { $0.pausedAt > 0 }
            guard wanted != applied else { return }
            applied = wanted
            setReadingPaused(wanted)
        }
    }

    /// Appends `job`; starts handling the queue here (an inline job, nothing being handled) or
    /// on the dispatch queue (nothing being handled), else leaves it to whoever is handling.
    private func enqueue(_ job: Job) {
        let start = state.withLock { state -> Bool in
            state.pending.append(job)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        guard start else { return }
        if job.inline {
            drain(inline: true)
        } else {
            queue.async { self.drain(inline: false) }
        }
    }

    /// Handles the queued jobs in order until none is left. Inline, it stops at the first job
    /// that must run off this thread and hands the rest to the dispatch queue.
    private func drain(inline: Bool) {
        enum Step {
            case run(Job)
            case stop
            /// Stop, and send the monitor calls after the event loop's current work.
            case stopAndFlushLater
            case handOff
        }
        while true {
            let step = state.withLock { state -> Step in
                guard let first = state.pending.first else {
                    state.draining = false
                    guard state.monitorCallsDue else { return .stop }
                    // Handled where the engine delivered it (maybe an event loop in the middle
                    // of a read): the read's next events (body, end) likely end the task and
                    // take the calls themselves, so they are sent only after the loop's work.
                    guard inline else {
                        sendMonitorCalls(&state)
                        return .stop
                    }
                    guard !state.monitorFlushScheduled else { return .stop }
                    state.monitorFlushScheduled = true
                    return .stopAndFlushLater
                }
                // Still `draining`: nobody else starts handling before the queue takes over.
                if inline, !first.inline { return .handOff }
                return .run(state.pending.removeFirst())
            }
            switch step {
            case .run(let job): job.run()
            case .stop: return
            case .stopAndFlushLater:
                ResumeBatch.run { self.flushMonitorCalls() }
                return
            case .handOff:
                queue.async { self.drain(inline: false) }
                return
            }
        }
    }

    // MARK: - Event monitors

    /// Makes `calls` after the task's earlier monitor calls, off the event loops: at the end of
    /// the burst being handled (or by the task's end, if that comes first); at once on the
    /// monitor queue when no burst is being handled (a call from the thread resuming the task,
    /// an interceptor's decision). `canWait`: the calls may wait for the task's next burst (the
    /// steps a metrics snapshot reports ride with the exchange's next event, as in
    /// ``deliver(_:inline:setReadingPaused:to:)``).
    func tellMonitors(_ calls: @escaping MonitorCalls, canWait: Bool = false) {
        state.withLock { state in
            state.monitorCalls.append(calls)
            if !canWait { state.monitorCallsDue = true }
            if !state.draining { sendMonitorCalls(&state) }
        }
    }

    /// For the task's end: the monitor calls still waiting (to make before the end's own), and
    /// whether some of the task's calls are still on the monitor queue (then the end must wait
    /// for it: ``afterQueuedMonitorCalls(_:)``).
    func takeMonitorCalls() -> (waiting: [MonitorCalls], queued: Bool) {
        state.withLock { state in
            defer {
                state.monitorCalls = []
                state.monitorCallsDue = false
            }
            return (state.monitorCalls, state.monitorJobs > 0)
        }
    }

    /// The scheduled send, after the event loop's work: what the task's end has not taken, unless
    /// a burst is being handled again (its end sends them).
    private func flushMonitorCalls() {
        state.withLock { state in
            state.monitorFlushScheduled = false
            if !state.draining { sendMonitorCalls(&state) }
        }
    }

    /// Runs `next` on the monitor queue, behind the calls queued there so far.
    func afterQueuedMonitorCalls(_ next: @escaping @Sendable () -> Void) {
        monitorQueue.async(next)
    }

    /// Sends the waiting monitor calls to the monitor queue as one job, unless all of them can
    /// wait. Under the lock, so two sends from two threads reach the queue in the order they
    /// were made.
    private func sendMonitorCalls(_ state: inout State) {
        guard state.monitorCallsDue else { return }
        let calls = state.monitorCalls
        state.monitorCalls = []
        state.monitorCallsDue = false
        state.monitorJobs += 1
        monitorQueue.async {
            for call in calls { call() }
            self.state.withLock { $0.monitorJobs -= 1 }
        }
    }
}
