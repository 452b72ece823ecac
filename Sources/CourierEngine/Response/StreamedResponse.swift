public import NIOCore
public import NIOHTTP1
import Synchronization

/// A response whose body arrives as an async sequence of chunks, read from the socket only as
/// fast as the consumer takes them (when more than a high watermark of bytes wait unread, the
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

    private let buffer = BackpressuredChunkBuffer<ByteBuffer, EngineMetrics>(
        highWatermark: ResponseBody.highWatermark, lowWatermark: ResponseBody.lowWatermark,
        dropsChunksAfterEnd: false, size: { $0.readableBytes })
    private let task = Mutex<EngineTask?>(nil)

    init() {}

    /// The exchange's metrics once the body has ended; nil before.
    public var metrics: EngineMetrics? {
        if case .success(let metrics) = buffer.end { return metrics }
        return nil
    }

    func attach(_ task: EngineTask) {
        self.task.withLock { $0 = task }
    }

    func cancel() {
        task.withLock { $0 }?.cancel()
    }

    // MARK: Producer side (event loop)

    func append(_ chunk: ByteBuffer) {
        // The task attached when the callback runs (a chunk can precede `attach`).
        buffer.append(chunk) { [weak self] paused in
            self?.task.withLock { $0 }?.setReadingPaused(paused)
        }
    }

    func finish(_ result: Result<EngineMetrics, EngineError>) {
        buffer.finish(result.mapError { $0 })
    }

    // MARK: Consumer side

    func next() async throws -> ByteBuffer? {
        try await buffer.next { self.cancel() }
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
                    case .uploadProgress, .metricsUpdated:
                        break
                    case .responseHead(let head):
                        let waiter = headBox.withLock { box in
                            defer { box.0 = nil }
                            return box.0
                        }
                        if let waiter {
                            let response = StreamedResponse(head: head, body: body)
                            ResumeBatch.run { waiter.resume(returning: .success(response)) }
                        }
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
                        if let waiter { ResumeBatch.run { waiter.resume(returning: .failure(error)) } }
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
