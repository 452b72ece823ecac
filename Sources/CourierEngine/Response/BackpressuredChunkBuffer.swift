import NIOCore
import Synchronization

/// The backpressured chunk queue behind a streamed response body (the engine's ``ResponseBody``
/// and the session's `ResponseBodyStream`): the producer appends chunks, the consumer awaits
/// them one at a time.
///
/// When more than `highWatermark` bytes wait unread, `append` pauses reading (calls its
/// callback with `true`, under the lock); once the consumer has taken all but `lowWatermark` of
/// them, `next` resumes it (the same callback with `false`, under the lock, so a resume can
/// never overtake the pause it answers). `finish` ends the sequence with a value or an error.
///
/// Threading: every method may be called from any thread; one consumer at a time.
package final class BackpressuredChunkBuffer<Chunk: Sendable, End: Sendable>: Sendable {
    private struct State {
        /// Unread chunks (a consumed chunk is released at once).
        var chunks = CircularBuffer<Chunk>()
        var bufferedBytes = 0
        /// The most ``bufferedBytes`` ever was (tests check the bound).
        var peakBufferedBytes = 0
        /// Restarts reading, when backpressure paused it.
        var paused: (@Sendable (Bool) -> Void)?
        var end: Result<End, any Error>?
        var waiter: CheckedContinuation<Chunk?, any Error>?
    }

    private let state = Mutex(State())
    private let highWatermark: Int
    private let lowWatermark: Int
    private let size: @Sendable (Chunk) -> Int
    private let dropsChunksAfterEnd: Bool

    /// - Parameters:
    ///   - highWatermark: unread bytes above which reading pauses.
    ///   - lowWatermark: unread bytes below which a paused reading resumes.
    ///   - dropsChunksAfterEnd: whether a chunk appended after ``finish(_:)`` is ignored
    ///     (otherwise it is queued like any other).
    ///   - size: the byte count of a chunk.
    package init(
        highWatermark: Int, lowWatermark: Int, dropsChunksAfterEnd: Bool,
        size: @escaping @Sendable (Chunk) -> Int
    ) {
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
        self.dropsChunksAfterEnd = dropsChunksAfterEnd
        self.size = size
    }

    /// The most unread bytes the buffer ever held (bounded by backpressure).
    package var peakBufferedBytes: Int { state.withLock { $0.peakBufferedBytes } }

    /// How the sequence ended; nil before ``finish(_:)``.
    package var end: Result<End, any Error>? { state.withLock { $0.end } }

    // MARK: Producer side

    /// Hands `chunk` to a waiting consumer or queues it; calls `setReadingPaused(true)` (under
    /// the lock) when too much waits unread, and keeps it to call `setReadingPaused(false)`
    /// once the consumer has caught up.
    package func append(_ chunk: Chunk, setReadingPaused: @escaping @Sendable (Bool) -> Void) {
        let waiter: CheckedContinuation<Chunk?, any Error>? = state.withLock { state in
            if dropsChunksAfterEnd, state.end != nil { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.chunks.append(chunk)
            state.bufferedBytes += size(chunk)
            state.peakBufferedBytes = Swift.max(state.peakBufferedBytes, state.bufferedBytes)
            if state.paused == nil, state.bufferedBytes > highWatermark {
                // Applied under the lock: a resume decided by the consumer a moment later can't
                // overtake this pause and leave reading stopped for good.
                state.paused = setReadingPaused
                setReadingPaused(true)
            }
            return nil
        }
        waiter?.resume(returning: chunk)
    }

    /// Ends the sequence after the queued chunks: nil, or `result`'s error, for the consumer.
    /// - Returns: false when it had already ended (`result` is then ignored).
    @discardableResult
    package func finish(_ result: Result<End, any Error>) -> Bool {
        let (first, waiter): (Bool, CheckedContinuation<Chunk?, any Error>?) = state.withLock { state in
            guard state.end == nil else { return (false, nil) }
            state.end = result
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        switch result {
        case .success: waiter?.resume(returning: nil)
        case .failure(let error): waiter?.resume(throwing: error)
        }
        return first
    }

    // MARK: Consumer side

    /// The next chunk, nil at a successful end; waits for one when none is queued.
    /// - Parameter onCancel: runs when the awaiting Swift task is cancelled (it should cancel
    ///   the transfer, which then finishes the buffer).
    /// - Throws: the error the buffer finished with.
    package func next(onCancel: @escaping @Sendable () -> Void) async throws -> Chunk? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Chunk?, any Error>) in
                // nil: parked until a chunk or the end arrives.
                let outcome: Result<Chunk?, any Error>? = state.withLock { state in
                    if let chunk = state.chunks.popFirst() {
                        state.bufferedBytes -= size(chunk)
                        if let paused = state.paused, state.bufferedBytes < lowWatermark {
                            state.paused = nil
                            paused(false)  // under the lock, in order with the pause
                        }
                        return .success(chunk)
                    }
                    switch state.end {
                    case .success: return .success(nil)
                    case .failure(let error): return .failure(error)
                    case nil:
                        state.waiter = continuation
                        return nil
                    }
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            onCancel()
        }
    }
}
