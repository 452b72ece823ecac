public import NIOCore
public import NIOHTTP1
import Synchronization

/// A response whose body arrives as an async sequence of chunks, read from the socket only as
/// fast as the consumer takes them (when more than ``highWatermark`` bytes wait unread, the
/// engine stops reading until the consumer catches up).
public struct StreamedResponse: Sendable {
    /// Status line and headers.
    public let head: HTTPResponseHead
    /// The body chunks. Iterate once. Throws ``EngineError`` when the transfer fails.
    public let body: ResponseBody
}

/// The body of a ``StreamedResponse``.
public final class ResponseBody: AsyncSequence, Sendable {
    /// Body chunks as they arrive.
    public typealias Element = ByteBuffer

    /// Bytes buffered before the engine stops reading from the socket.
    public static let highWatermark = 1 << 20
    /// Bytes buffered below which reading resumes.
    public static let lowWatermark = 256 << 10

    private struct State {
        var chunks = CircularBuffer<ByteBuffer>()
        var bufferedBytes = 0
        var paused = false
        var end: Result<EngineMetrics, EngineError>?
        var waiter: CheckedContinuation<ByteBuffer?, any Error>?
        var task: EngineTask?
    }

    private let state = Mutex(State())

    init() {}

    /// The exchange's metrics once the body has ended; nil before.
    public var metrics: EngineMetrics? {
        state.withLock { state in
            if case .success(let metrics) = state.end { return metrics }
            return nil
        }
    }

    func attach(_ task: EngineTask) {
        state.withLock { $0.task = task }
    }

    func cancel() {
        state.withLock { $0.task }?.cancel()
    }

    // MARK: Producer side (event loop)

    func append(_ chunk: ByteBuffer) {
        let waiter: CheckedContinuation<ByteBuffer?, any Error>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.chunks.append(chunk)
            state.bufferedBytes += chunk.readableBytes
            if !state.paused, state.bufferedBytes > Self.highWatermark {
                state.paused = true
                // Under the lock: a resume decided by the consumer can't overtake this pause.
                state.task?.setReadingPaused(true)
            }
            return nil
        }
        waiter?.resume(returning: chunk)
    }

    func finish(_ result: Result<EngineMetrics, EngineError>) {
        let waiter: CheckedContinuation<ByteBuffer?, any Error>? = state.withLock { state in
            guard state.end == nil else { return nil }
            state.end = result
            defer { state.waiter = nil }
            return state.waiter
        }
        switch result {
        case .success: waiter?.resume(returning: nil)
        case .failure(let error): waiter?.resume(throwing: error)
        }
    }

    // MARK: Consumer side

    func next() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                enum Outcome {
                    case chunk(ByteBuffer)
                    case end(Result<EngineMetrics, EngineError>)
                    case wait
                }
                let outcome: Outcome = state.withLock { state in
                    if let chunk = state.chunks.popFirst() {
                        state.bufferedBytes -= chunk.readableBytes
                        if state.paused, state.bufferedBytes < Self.lowWatermark {
                            state.paused = false
                            state.task?.setReadingPaused(false)  // under the lock, in order with the pause
                        }
                        return .chunk(chunk)
                    }
                    if let end = state.end { return .end(end) }
                    state.waiter = continuation
                    return .wait
                }
                switch outcome {
                case .chunk(let chunk):
                    continuation.resume(returning: chunk)
                case .end(.success):
                    continuation.resume(returning: nil)
                case .end(.failure(let error)):
                    continuation.resume(throwing: error)
                case .wait:
                    break
                }
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// Iterates the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let body: ResponseBody

        /// The next chunk, or nil at the end of the body.
        public mutating func next() async throws -> ByteBuffer? {
            try await body.next()
        }
    }

    /// Makes the iterator (iterate once).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(body: self)
    }
}

extension HTTPEngine {
    /// Runs `request` and returns as soon as the response head arrives; the body streams with
    /// backpressure. Cancelling the calling task (or abandoning the body's iteration through
    /// cancellation) cancels the request.
    public func stream(_ request: EngineRequest) async throws(EngineError) -> StreamedResponse {
        let body = ResponseBody()
        let headBox = Mutex<(CheckedContinuation<Result<StreamedResponse, EngineError>, Never>?, Bool)>((nil, false))
        let result: Result<StreamedResponse, EngineError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                headBox.withLock { $0.0 = continuation }
                let task = execute(request) { event in
                    switch event {
                    case .uploadProgress:
                        break
                    case .responseHead(let head):
                        let waiter = headBox.withLock { box in
                            defer { box.0 = nil }
                            return box.0
                        }
                        waiter?.resume(returning: .success(StreamedResponse(head: head, body: body)))
                    case .bodyPart(let chunk):
                        body.append(chunk)
                    case .finished(let metrics):
                        body.finish(.success(metrics))
                    case .failed(let error, _):
                        body.finish(.failure(error))
                        let waiter = headBox.withLock { box in
                            defer { box.0 = nil }
                            return box.0
                        }
                        waiter?.resume(returning: .failure(error))
                    }
                }
                body.attach(task)
                if headBox.withLock({ $0.1 }) { task.cancel() }
            }
        } onCancel: {
            headBox.withLock { $0.1 = true }
            body.cancel()
        }
        return try result.get()
    }
}
