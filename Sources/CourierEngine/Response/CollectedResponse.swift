public import NIOCore
public import NIOHTTP1
import Synchronization

/// A whole response held in memory: head, body and metrics.
public struct CollectedResponse: Sendable {
    /// Status line and headers.
    public var head: HTTPResponseHead
    /// The body (decompressed when decompression applied).
    public var body: ByteBuffer
    /// Timings and counts of the exchange.
    public var metrics: EngineMetrics

    /// Creates a response from its parts.
    public init(head: HTTPResponseHead, body: ByteBuffer, metrics: EngineMetrics) {
        self.head = head
        self.body = body
        self.metrics = metrics
    }
}

extension HTTPEngine {
    /// Runs `request` and gathers the whole response. A body larger than `maximumBodySize`
    /// cancels the request and throws ``EngineError/protocolViolation(_:)`` naming the limit.
    /// Cancelling the calling task cancels the request.
    public func collect(_ request: EngineRequest, maximumBodySize: Int = 256 << 20) async throws(EngineError)
        -> CollectedResponse
    {
        let collector = Collector(maximumBodySize: maximumBodySize)
        let result: Result<CollectedResponse, EngineError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                collector.start(continuation: continuation, engine: self, request: request)
            }
        } onCancel: {
            collector.cancel()
        }
        return try result.get()
    }
}

/// Gathers events into a ``CollectedResponse``; touched only from the request's event loop,
/// except for `cancel`, which goes through the lock.
private final class Collector: Sendable {
    private struct State {
        var head: HTTPResponseHead?
        var body: ByteBuffer?
        var continuation: CheckedContinuation<Result<CollectedResponse, EngineError>, Never>?
        var task: EngineTask?
        var cancelled = false
    }

    private let state = Mutex(State())
    let maximumBodySize: Int

    init(maximumBodySize: Int) {
        self.maximumBodySize = maximumBodySize
    }

    func start(
        continuation: CheckedContinuation<Result<CollectedResponse, EngineError>, Never>,
        engine: HTTPEngine,
        request: EngineRequest
    ) {
        state.withLock { $0.continuation = continuation }
        let task = engine.execute(request) { [self] event in
            self.handle(event)
        }
        let cancelNow = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    private func handle(_ event: EngineEvent) {
        switch event {
        case .uploadProgress, .metricsUpdated:
            break
        case .responseHead(let head):
            state.withLock { $0.head = head }
        case .bodyPart(var part):
            let overflow: EngineTask? = state.withLock { state in
                if state.body == nil {
                    state.body = part
                } else {
                    state.body?.writeBuffer(&part)
                }
                if (state.body?.readableBytes ?? 0) > maximumBodySize { return state.task }
                return nil
            }
            if let overflow {
                overflow.execution.finish(
                    .failure(.protocolViolation("the response body is larger than \(maximumBodySize) bytes")),
                    metrics: nil
                )
                overflow.cancel()
            }
        case .finished(let metrics):
            let (continuation, response) = state.withLock { state in
                defer { state.continuation = nil }
                let response = state.head.map {
                    CollectedResponse(head: $0, body: state.body ?? ByteBuffer(), metrics: metrics)
                }
                return (state.continuation, response)
            }
            guard let continuation else { return }
            let result: Result<CollectedResponse, EngineError> =
                response.map { .success($0) } ?? .failure(.protocolViolation("the response ended without a head"))
            ResumeBatch.run { continuation.resume(returning: result) }
        case .failed(let error, _):
            let continuation = state.withLock { state in
                defer { state.continuation = nil }
                return state.continuation
            }
            guard let continuation else { return }
            ResumeBatch.run { continuation.resume(returning: .failure(error)) }
        }
    }
}
