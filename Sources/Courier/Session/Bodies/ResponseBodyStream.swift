import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import Synchronization

/// The body of a response from ``URLSessionManager/bytes(for:body:interceptor:)``: an async sequence of `Data`
/// chunks as they arrive, never gathered in memory.
///
/// Backpressure: when more than ``highWatermark`` bytes wait unread, the session stops reading
/// from the socket (the server's sending pauses) until the consumer has taken all but
/// ``lowWatermark`` of them. Memory stays bounded whatever the body's size.
///
/// Iterate once. The sequence ends when the body is complete and throws the task's error
/// (a ``CourierError``) when the transfer fails. Cancelling the iterating Swift task, calling
/// ``cancel()``, or dropping the iterator before the end cancels the request.
public final class ResponseBodyStream: AsyncSequence, Sendable {
    /// A chunk of the body, as received (after decompression).
    public typealias Element = Data

    /// Unread bytes above which the session stops reading from the socket: 1 MiB.
    public static let highWatermark = 1 << 20
    /// Unread bytes below which reading resumes: 256 KiB.
    public static let lowWatermark = 256 << 10

    private enum Head {
        /// Nothing yet; the continuation of ``waitForHead()`` when it waits.
        case waiting(CheckedContinuation<Void, any Error>?)
        /// Arrived before anyone waited (the task holds it; an `HTTPURLResponse` is made
        /// from it only for ``URLSessionManager/bytes(for:body:interceptor:)``).
        case arrived
        /// The task failed before a head arrived, before anyone waited.
        case failed(any Error)
        /// Handed over.
        case taken
    }

    private struct State {
        var head: Head = .waiting(nil)
        var task: SessionTask?
    }

    /// What the task's face (held by the task while it runs) and the caller's face share.
    private final class Shared: Sendable {
        let state = Mutex(State())
        /// The body's chunks, with backpressure.
        let buffer = BackpressuredChunkBuffer<Data, Void>(
            highWatermark: ResponseBodyStream.highWatermark, lowWatermark: ResponseBodyStream.lowWatermark,
            dropsChunksAfterEnd: true, size: { $0.count })
    }

    private let shared: Shared
    /// Whether this is the caller's face: when it goes away before the body's end (dropped
    /// without being read to the end), the request is cancelled. The task holds the other
    /// face, so a running task never keeps the caller's alive.
    private let isCallersFace: Bool
    private var buffer: BackpressuredChunkBuffer<Data, Void> { shared.buffer }

    /// The task's face; ``callersFace()`` makes the one handed out.
    init() {
        shared = Shared()
        isCallersFace = false
    }

    private init(sharing other: ResponseBodyStream) {
        shared = other.shared
        isCallersFace = true
    }

    /// The face handed to the caller: the same stream, and dropping it before the end cancels.
    func callersFace() -> ResponseBodyStream {
        ResponseBodyStream(sharing: self)
    }

    deinit {
        if isCallersFace { abandon() }
    }

    /// The task that runs the request (its progress, metrics and state).
    public var task: SessionTask? { shared.state.withLock { $0.task } }

    /// Cancels the request; the sequence then throws ``CourierError/cancelled(url:)``.
    public func cancel() {
        shared.state.withLock { $0.task }?.cancel()
    }

    /// The most unread bytes the stream ever held (bounded by backpressure).
    var peakBufferedBytes: Int { buffer.peakBufferedBytes }

    func attach(_ task: SessionTask) {
        shared.state.withLock { $0.task = task }
    }

    // MARK: - Producer side (the task delegate, on the task's callback queue)

    /// The final response head arrived (not a redirect or a challenge that is answered) and
    /// is on the task.
    func receiveHead() {
        let waiter: CheckedContinuation<Void, any Error>? = shared.state.withLock { state in
            guard case .waiting(let waiter) = state.head else { return nil }
            state.head = waiter == nil ? .arrived : .taken
            return waiter
        }
        waiter?.resume()
    }

    /// A chunk of the body; calls `setReadingPaused(true)` when too much waits unread, and
    /// `setReadingPaused(false)` once the consumer has caught up.
    func append(_ buffer: ByteBuffer, setReadingPaused: @escaping @Sendable (Bool) -> Void) {
        self.buffer.append(Data(buffer.readableBytesView), setReadingPaused: setReadingPaused)
    }

    /// The task completed: `error` nil when the whole body arrived.
    func finish(error: (any Error)?, url: URL?) {
        let headError = error ?? CourierError.connectionLost(url: url, reason: "the task ended without a response")
        // The head first (a later finish finds it settled), then the body's end.
        let head: CheckedContinuation<Void, any Error>? = shared.state.withLock { state in
            guard case .waiting(let waiting) = state.head else { return nil }
            state.head = waiting == nil ? .failed(headError) : .taken
            return waiting
        }
        head?.resume(throwing: headError)
        buffer.finish(error.map { .failure($0) } ?? .success(()))
    }

    // MARK: - Consumer side

    /// Waits for the response head (then on ``task``); throws the task's error when it fails first.
    func waitForHead() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: Result<Void, any Error>? = shared.state.withLock { state in
                    switch state.head {
                    case .waiting:
                        state.head = .waiting(continuation)
                        return nil
                    case .arrived:
                        state.head = .taken
                        return .success(())
                    case .failed(let error):
                        state.head = .taken
                        return .failure(error)
                    case .taken:
                        return .failure(CourierError.cancelled(url: nil))
                    }
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            self.cancel()
        }
    }

    func next() async throws -> Data? {
        try await buffer.next { self.cancel() }
    }

    /// Cancels the request when the body was abandoned before its end.
    fileprivate func abandon() {
        let running = buffer.end == nil ? shared.state.withLock { $0.task } : nil
        running?.cancel()
    }

    /// Cancels the request if it is dropped before the body's end.
    fileprivate final class Consumer: Sendable {
        let stream: ResponseBodyStream
        init(_ stream: ResponseBodyStream) { self.stream = stream }
        deinit { stream.abandon() }
    }

    /// Iterates the chunks. Dropping it before the end cancels the request.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let consumer: Consumer

        /// The next chunk, or nil at the end of the body.
        /// - Throws: the task's error (a ``CourierError``), e.g. when the connection breaks.
        public mutating func next() async throws -> Data? {
            try await consumer.stream.next()
        }
    }

    /// Makes the iterator (iterate once).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: Consumer(self))
    }
}

/// The serializer of a streaming task: the body goes to the stream, so there is nothing to
/// parse or validate (the caller sees the status code).
struct StreamedBodySerializer: ResponseSerializer {
    func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> Data? { nil }
}
