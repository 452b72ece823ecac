import NIOCore
import Synchronization

/// Carries a streamed request body's chunks from the task that produces them to the
/// connection's event loop, in batches.
///
/// The producer appends chunks without waiting until ``highWater`` bytes are queued here (or the
/// upload is paused); the first chunk of a batch asks the event loop to drain, unless the channel
/// is full, in which case the event loop drains by itself, without a hop, when the channel turns
/// writable. The drain writes what the channel takes with one flush and leaves the rest queued.
/// So a producer pays about one wake-up per `highWater - lowWater` bytes and the event loop one
/// hop per batch, not one of each per chunk. At most ``highWater`` bytes plus one chunk wait here,
/// whatever the producer does.
///
/// Shared between the producing task and the event loop; every field sits behind the mutex.
final class RequestBodyPipe: Sendable {
    /// Bytes that may wait here before the producer waits for the event loop to take them.
    ///
    /// With ``lowWater``, sized so that the producer sleeps and is woken about once per 1.5 MiB
    /// (each wake-up is a futex round trip between the event loop and the cooperative pool: at
    /// 512 KiB / 256 KiB they cost 8,000 futex calls per GiB), while one upload holds at most
    /// 2 MiB (plus a chunk) here.
    static let highWater = 2 << 20
    /// A waiting producer goes on once at most this many bytes are left queued: enough for the
    /// event loop to keep the socket busy while the producer wakes up.
    static let lowWater = 512 << 10

    private struct State {
        var chunks = CircularBuffer<ByteBuffer>()
        var bytes = 0
        /// A drain is queued on (or running on) the event loop.
        var drainScheduled = false
        /// The channel takes more: writable and the upload is not paused.
        var open = true
        /// The upload is paused: the producer waits whatever the room.
        var paused = false
        /// The producer returned: once the chunks are written the body ends.
        var ended = false
        /// The drain reported the end: nothing more is drained.
        var closed = false
        var waiter: CheckedContinuation<Void, any Error>?
        /// Set when the exchange stopped taking the body; every later write throws it.
        var failure: EngineError?

        var hasRoom: Bool { !paused && bytes < RequestBodyPipe.highWater }

        /// The waiting producer, taken, when it may go on: not paused and at most ``lowWater``
        /// bytes queued (so it is woken once per `highWater - lowWater` bytes, not per chunk).
        mutating func releasableWaiter() -> CheckedContinuation<Void, any Error>? {
            guard !paused, bytes <= RequestBodyPipe.lowWater, let waiter else { return nil }
            self.waiter = nil
            return waiter
        }
    }

    private let state = Mutex(State())
    private let loop: any EventLoop
    /// Runs on `loop`: takes the queued chunks and writes them.
    private let drain: @Sendable () -> Void

    init(loop: any EventLoop, drain: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.drain = drain
    }

    /// Queues `chunk`; waits while too much is queued or the upload is paused. Throws the
    /// exchange's error once it stopped taking the body.
    func write(_ chunk: ByteBuffer) async throws {
        let count = chunk.readableBytes
        guard count > 0 else {
            if let failure = state.withLock({ $0.failure }) { throw failure }
            return
        }
        let (schedule, wait) = try state.withLock { state throws(EngineError) -> (Bool, Bool) in
            if let failure = state.failure { throw failure }
            state.chunks.append(chunk)
            state.bytes += count
            let schedule = !state.drainScheduled && state.open
            if schedule { state.drainScheduled = true }
            return (schedule, !state.hasRoom)
        }
        if schedule { loop.execute(drain) }
        if wait { try await waitForRoom() }
    }

    private func waitForRoom() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result: Result<Void, EngineError>? = state.withLock { state in
                if let failure = state.failure { return .failure(failure) }
                if state.hasRoom { return .success(()) }
                state.waiter = continuation
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }

    /// The producer returned: the body ends after the queued chunks.
    func finish() {
        let schedule = state.withLock { state -> Bool in
            state.ended = true
            guard !state.drainScheduled, !state.closed, state.open else { return false }
            state.drainScheduled = true
            return true
        }
        if schedule { loop.execute(drain) }
    }

    /// What the drain gets from ``next()``.
    enum Next {
        /// The oldest queued chunk.
        case chunk(ByteBuffer)
        /// Nothing queued: the drain is over; `ended` once, when the producer returned.
        case empty(ended: Bool)
    }

    /// On the event loop, from the drain: the oldest queued chunk (a waiting producer goes on
    /// once at most ``lowWater`` bytes are queued), or the end of the drain.
    func next() -> Next {
        let (result, waiter) = state.withLock { state -> (Next, CheckedContinuation<Void, any Error>?) in
            guard let chunk = state.chunks.popFirst() else {
                state.drainScheduled = false
                guard state.ended, !state.closed else { return (.empty(ended: false), nil) }
                state.closed = true
                return (.empty(ended: true), nil)
            }
            state.bytes -= chunk.readableBytes
            return (.chunk(chunk), state.releasableWaiter())
        }
        waiter?.resume()
        return result
    }

    /// On the event loop, from the drain: the channel takes no more (paused, or full); the
    /// chunks stay queued until ``setOpen(_:paused:)`` opens the pipe again.
    func park() {
        state.withLock { state in
            state.drainScheduled = false
            state.open = false
        }
    }

    /// On the event loop: whether the channel takes more (writable and not paused) and whether
    /// the upload is paused. Releases a waiting producer when there is room. Returns true when
    /// the caller (on the event loop) must drain now: the pipe opened with chunks queued (or
    /// the end pending) and no drain under way.
    func setOpen(_ open: Bool, paused: Bool) -> Bool {
        let (waiter, drainNow) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, Bool) in
            state.open = open
            state.paused = paused
            var drainNow = false
            if open, !state.drainScheduled, !state.closed, !state.chunks.isEmpty || state.ended {
                state.drainScheduled = true
                drainNow = true
            }
            return (state.releasableWaiter(), drainNow)
        }
        waiter?.resume()
        return drainNow
    }

    /// The exchange stopped taking the body: drops the queued chunks and fails the producer's
    /// current and later writes with `error`. Returns false if it had already failed.
    @discardableResult
    func fail(_ error: EngineError) -> Bool {
        let (first, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, any Error>?) in
            guard state.failure == nil else { return (false, nil) }
            state.failure = error
            state.chunks.removeAll()
            state.bytes = 0
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(throwing: error)
        return first
    }

    /// Whether the exchange failed the pipe (the producer's own error is then not reported).
    var hasFailed: Bool { state.withLock { $0.failure != nil } }
}
