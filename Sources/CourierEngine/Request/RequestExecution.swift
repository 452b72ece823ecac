import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// One request's journey through the engine: queued in the pool, running on a connection,
/// then finished. Owns the guarantee that the caller sees exactly one terminal event.
///
/// Shared between the caller (cancel, pause), the pool (queue) and a connection's event loop
/// (events); every mutable field sits behind the mutex.
final class RequestExecution: Sendable {
    enum Phase {
        /// Not yet handed to the pool.
        case created
        /// Waiting in the pool's queue for a connection.
        case queued
        /// On a connection.
        case running(HTTP1Connection)
        /// The terminal event was delivered (or is being delivered).
        case finished
    }

    private struct State {
        var phase: Phase = .created
        var readingPaused = false
        var uploadPaused = false
        var attempts = 0
        /// The caller's event closure; dropped after the terminal event so that callers that
        /// hold their task (and so this execution) from inside the closure don't leak.
        var onEvent: EventSink?
        /// The setup of the connection opened for this request, while it waits for it.
        var setupProgress: ConnectionSetupProgress?
        /// Ends the request at its deadline while it waits for a connection.
        var waitTimer: Scheduled<Void>?
        /// The metrics of attempts sent again on a new connection.
        var replayedAttempts: [EngineMetrics] = []
        /// The host whose HTTP/2 connection this attempt rides (connection coalescing).
        var coalescedOnto: String?
        /// Whether the request may look for another host's connection (not after a 421).
        var mayCoalesce = true
    }

    /// The caller's closure, wrapped: a bare function value stored in the lock's generic state
    /// is kept at its most general abstraction, and each read out of it (every event) made a
    /// reabstraction thunk, an allocation. Inside a struct it keeps its own.
    private struct EventSink {
        let deliver: @Sendable (EngineEvent) -> Void
    }

    /// When the engine accepted the request.
    let fetchStart: Date

    let request: EngineRequest
    let target: RequestTarget
    let key: ConnectionKey
    let waiterID: ConnectionPoolStateMachine.WaiterID
    let idleTimeout: TimeAmount
    /// The body's length, read once on the caller's thread (for a file, from its check there:
    /// no `stat` on an event loop).
    let bodyLength: Int64?
    /// A file body's file as checked when the request was made: a connection sends it only if
    /// the path still names that file (see ``FileChunkReader/init(path:expecting:)``).
    let bodyFile: FileChunkReader.Identity?
    /// How many batches of a streamed body the connection handed to the socket (flushes that
    /// carried body bytes): the upload path's batching, for diagnostics and its tests.
    let bodyWriteBatches = Atomic<Int>(0)
    private let state: Mutex<State>

    init(
        request: EngineRequest,
        target: RequestTarget,
        waiterID: ConnectionPoolStateMachine.WaiterID,
        idleTimeout: TimeAmount,
        proxy: EngineProxy? = nil,
        bodyFile: FileChunkReader.Identity? = nil,
        onEvent: @escaping @Sendable (EngineEvent) -> Void
    ) {
        self.request = request
        self.target = target
        self.key = ConnectionKey(target, proxy: proxy)
        self.waiterID = waiterID
        self.idleTimeout = idleTimeout
        self.bodyFile = bodyFile
        if let bodyFile, let body = request.body, case .file(_, let offset, let length) = body.storage {
            self.bodyLength = length ?? max(0, bodyFile.size - offset)
        } else {
            self.bodyLength = request.body?.knownLength
        }
        self.fetchStart = Date()
        self.state = Mutex(State(onEvent: EventSink(deliver: onEvent)))
    }

    var isReadingPaused: Bool { state.withLock { $0.readingPaused } }
    var isUploadPaused: Bool { state.withLock { $0.uploadPaused } }

    /// Moves to `.queued`; false when already finished (cancelled before it was queued).
    func markQueued() -> Bool {
        state.withLock { state in
            if case .finished = state.phase { return false }
            state.phase = .queued
            state.attempts += 1
            state.coalescedOnto = nil
            return true
        }
    }

    /// Binds the execution to the connection that will run it; false when it already finished.
    func markRunning(on connection: HTTP1Connection) -> Bool {
        let (running, timer): (Bool, Scheduled<Void>?) = state.withLock { state in
            if case .finished = state.phase { return (false, nil) }
            state.phase = .running(connection)
            state.setupProgress = nil
            defer { state.waitTimer = nil }
            return (true, state.waitTimer)
        }
        timer?.cancel()
        return running
    }

    /// Notes the setup of the connection opened for this request (its metrics say how far it
    /// got if the request ends before it has a connection).
    func waitForConnection(being progress: ConnectionSetupProgress) {
        state.withLock { $0.setupProgress = progress }
    }

    /// Keeps `timer` (the deadline while waiting for a connection) to cancel once the request
    /// has a connection or has ended; cancels it at once when the request already ended.
    func setWaitTimer(_ timer: Scheduled<Void>) {
        let stale: Scheduled<Void>? = state.withLock { state in
            if case .finished = state.phase { return timer }
            defer { state.waitTimer = timer }
            return state.waitTimer
        }
        stale?.cancel()
    }

    /// Whether an attempt that failed on a stale connection may run once more: only the
    /// first, and as `replay` allows (an idempotent method; or any method when nothing of it
    /// was written and its body can be sent again).
    func mayReplay(_ replay: ReplayEligibility) -> Bool {
        switch replay {
        case .none:
            return false
        case .ifIdempotent:
            guard request.isIdempotent else { return false }
        case .unsent:
            if !request.isIdempotent, let body = request.body, case .stream = body.storage { return false }
        }
        return state.withLock { $0.attempts < 2 }
    }

    /// Keeps the metrics of an attempt that is being sent again, for the final metrics'
    /// ``EngineMetrics/replayedAttempts``.
    func recordReplayedAttempt(_ metrics: EngineMetrics) {
        state.withLock { $0.replayedAttempts.append(metrics) }
    }

    /// Whether a request the server never processed (an HTTP/2 stream refused, or above the
    /// last stream id of a `GOAWAY`) may be sent again, whatever its method: up to twice more,
    /// and only when its body can be replayed (not a one-shot stream).
    func mayRetryUnprocessed() -> Bool {
        if let body = request.body, case .stream = body.storage { return false }
        return state.withLock { $0.attempts < 3 }
    }

    var phase: Phase { state.withLock { $0.phase } }

    /// The host whose HTTP/2 connection this attempt rides, when it is not its own.
    var coalescedHost: String? { state.withLock { $0.coalescedOnto } }

    /// Whether the request may ride another host's HTTP/2 connection.
    var mayCoalesce: Bool { state.withLock { $0.mayCoalesce } }

    /// Notes that this attempt rides the HTTP/2 connection of `host`.
    func markCoalesced(onto host: String) {
        state.withLock { $0.coalescedOnto = host }
    }

    /// The server answered `421 Misdirected Request` on another host's connection: the next
    /// attempt goes on a connection of the request's own host.
    func markMisdirected() {
        state.withLock { state in
            state.coalescedOnto = nil
            state.mayCoalesce = false
        }
    }

    /// The earlier attempts sent again on a new connection (see ``recordReplayedAttempt(_:)``).
    var replayedAttemptsSoFar: [EngineMetrics] { state.withLock { $0.replayedAttempts } }

    /// Passes a non-terminal event to the caller.
    func emit(_ event: EngineEvent) {
        let onEvent = state.withLock { $0.onEvent }
        onEvent?.deliver(event)
    }

    /// Delivers the terminal event, once. Returns false if one was already delivered.
    @discardableResult
    func finish(_ result: Result<Void, EngineError>, metrics: EngineMetrics?) -> Bool {
        let (delivery, progress, timer, replayed): (EventSink?, ConnectionSetupProgress?, Scheduled<Void>?, [EngineMetrics]) =
            state.withLock { state in
                if case .finished = state.phase { return (nil, nil, nil, []) }
                state.phase = .finished
                defer {
                    state.onEvent = nil
                    state.setupProgress = nil
                    state.waitTimer = nil
                    state.replayedAttempts = []
                }
                return (state.onEvent, state.setupProgress, state.waitTimer, state.replayedAttempts)
            }
        timer?.cancel()
        guard let onEvent = delivery else { return false }
        // No exchange's metrics (it never reached a connection): what is known, the start, and
        // how far the setup of the connection opened for it got.
        var finalMetrics = metrics ?? Self.waitingMetrics(fetchStart: fetchStart, setup: progress?.phase)
        if !replayed.isEmpty { finalMetrics.replayedAttempts = replayed }
        switch result {
        case .success:
            onEvent.deliver(.finished(finalMetrics))
        case .failure(let error):
            onEvent.deliver(.failed(error, finalMetrics))
        }
        return true
    }

    /// The metrics of a request that ended before it had a connection.
    private static func waitingMetrics(fetchStart: Date, setup: ConnectionSetupPhase?) -> EngineMetrics {
        var metrics = EngineMetrics(fetchStart: fetchStart)
        if let setup { metrics.connectionSetupPhase = setup }
        return metrics
    }

    /// Pauses or resumes reading the response and sending the body (suspend / resume).
    func setPaused(reading: Bool?, upload: Bool?) -> HTTP1Connection? {
        state.withLock { state in
            if let reading { state.readingPaused = reading }
            if let upload { state.uploadPaused = upload }
            if case .running(let connection) = state.phase { return connection }
            return nil
        }
    }
}
