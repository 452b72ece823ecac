import NIOCore
import Synchronization

/// Carries a streamed request body's chunks from the task that produces them to the
/// connection's event loop, in batches.
///
/// The producer appends chunks without waiting while the connection can take more (writable,
/// not paused) and less than ``highWater`` bytes wait here; the first chunk of a batch asks the
/// event loop to drain, and the drain writes everything queued by then with one flush. So a fast
/// producer pays one event-loop hop per batch, not per chunk, and never suspends while the
/// socket keeps up. When the socket falls behind (or the task is suspended) the producer waits;
/// the event loop releases it when the channel is writable again. At most ``highWater`` bytes
/// plus one chunk wait here, whatever the producer does.
///
/// Shared between the producing task and the event loop; every field sits behind the mutex.
final class RequestBodyPipe: Sendable {
    /// Bytes that may wait here before the producer waits for the event loop to take them.
    static let highWater = 512 * 1024

    private struct State {
        var chunks: [ByteBuffer] = []
        var bytes = 0
        /// A drain is queued on (or running on) the event loop.
        var drainScheduled = false
        /// The connection takes more: the channel is writable and the upload is not paused.
        var open = true
        /// The producer returned: once the chunks are written the body ends.
        var ended = false
        /// The drain reported the end: nothing more is drained.
        var closed = false
        var waiter: CheckedContinuation<Void, any Error>?
        /// Set when the exchange stopped taking the body; every later write throws it.
        var failure: EngineError?
    }

    private let state = Mutex(State())
    private let loop: any EventLoop
    /// Runs on `loop`: takes the queued chunks and writes them.
    private let drain: @Sendable () -> Void

    init(loop: any EventLoop, drain: @escaping @Sendable () -> Void) {
        self.loop = loop
        self.drain = drain
    }

    /// Queues `chunk`; waits while the connection cannot take more. Throws the exchange's error
    /// once it stopped taking the body.
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
            return (schedule, !state.open || state.bytes >= Self.highWater)
        }
        if schedule { loop.execute(drain) }
        if wait { try await waitForRoom() }
    }

    private func waitForRoom() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result: Result<Void, EngineError>? = state.withLock { state in
                if let failure = state.failure { return .failure(failure) }
                if state.open && state.bytes < Self.highWater { return .success(()) }
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

    /// On the event loop, from the drain: the queued chunks (taken), or when none is left
    /// whether the body ended (the producer returned; reported once) and the drain is over.
    func take() -> (chunks: [ByteBuffer], ended: Bool) {
        state.withLock { state in
            guard !state.chunks.isEmpty else {
                state.drainScheduled = false
                guard state.ended, !state.closed else { return ([], false) }
                state.closed = true
                return ([], true)
            }
            let chunks = state.chunks
            state.chunks = []
            state.bytes = 0
            return (chunks, false)
        }
    }

    /// On the event loop, from the drain: the connection takes no more (paused, or the channel
    /// is full); `unsent` goes back to the front of the queue and waits until ``setOpen(_:)``
    /// opens the pipe again.
    func park(returning unsent: ArraySlice<ByteBuffer> = []) {
        state.withLock { state in
            state.drainScheduled = false
            state.open = false
            if !unsent.isEmpty {
                state.chunks.insert(contentsOf: unsent, at: 0)
                for chunk in unsent { state.bytes += chunk.readableBytes }
            }
        }
    }

    /// On the event loop: whether the connection takes more (writable and not paused).
    /// Opening releases a waiting producer and drains what was parked.
    func setOpen(_ open: Bool) {
        let (waiter, schedule) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, Bool) in
            state.open = open
            guard open else { return (nil, false) }
            var schedule = false
            if !state.drainScheduled, !state.closed, !state.chunks.isEmpty || state.ended {
                state.drainScheduled = true
                schedule = true
            }
            guard state.bytes < Self.highWater, let waiter = state.waiter else { return (nil, schedule) }
            state.waiter = nil
            return (waiter, schedule)
        }
        if schedule { loop.execute(drain) }
        waiter?.resume()
    }

    /// The exchange stopped taking the body: drops the queued chunks and fails the producer's
    /// current and later writes with `error`. Returns false if it had already failed.
    @discardableResult
    func fail(_ error: EngineError) -> Bool {
        let (first, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, any Error>?) in
            guard state.failure == nil else { return (false, nil) }
            state.failure = error
            state.chunks = []
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
