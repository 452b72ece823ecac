public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1
import Synchronization

/// A transfer started for Swift concurrency: the running task, its progress as async
/// sequences, and its result to await. Returned (already resumed) by the uploads, downloads and
/// ``URLSessionManager/transfer(for:interceptor:)``.
///
/// ```swift
/// let upload = manager.upload(fileAt: movieURL, with: URLRequest(url: uploadURL))
/// Task { for await progress in upload.uploadProgress { print(Int(progress.fractionCompleted * 100), "%") } }
/// let response = try await upload.response        // HTTPTypesResponse<Data>
/// print(response.status, response.value.count)
/// ```
///
/// The result is kept: ``response`` and ``value`` may be awaited any number of times, from any
/// task, before or after the transfer ends. A Swift task cancelled while awaiting them cancels
/// the transfer on the wire (the await then throws ``CourierError/cancelled(url:)``); so does
/// ``cancel()``. The transfer completes exactly once. No `HTTPURLResponse` is made for a data
/// or upload transfer (a download makes one for its file move, AFNetworking's destination
/// block takes one).
public struct TransferHandle<Value: Sendable>: Sendable {
    /// The task underneath (an ``UploadTask``, a ``DownloadTask`` or a ``DataTask``): its
    /// counts, state, `suspend()`/`resume()`, and `response` for those who want an
    /// `HTTPURLResponse` (made on first use).
    public let task: SessionTask
    /// The request body's progress, from the start: the current value first, then changes
    /// (coalesced for a slow consumer, which sees the newest), ending when the transfer ends
    /// with its final count. Iterate it once.
    public let uploadProgress: TransferProgressSequence
    /// The response body's progress (total from `Content-Length`, -1 without one); as
    /// ``uploadProgress``. Iterate it once.
    public let downloadProgress: TransferProgressSequence
    let completion: TransferCompletion<Value>

    init(task: SessionTask, completion: TransferCompletion<Value>) {
        self.task = task
        self.completion = completion
        self.uploadProgress = TransferProgressSequence(task: task, direction: .upload)
        self.downloadProgress = TransferProgressSequence(task: task, direction: .download)
    }

    /// Waits for the end of the transfer and returns the final response with the value.
    /// - Throws: the transfer's error (a ``CourierError``); ``CourierError/cancelled(url:)``
    ///   when it or the awaiting Swift task was cancelled.
    public var response: HTTPTypesResponse<Value> {
        get async throws { try await completion.wait(cancelling: task).get().response }
    }

    /// The value of ``response``.
    /// - Throws: as ``response``.
    public var value: Value {
        get async throws { try await response.value }
    }

    /// Cancels the transfer on the wire; awaiting ``response`` throws ``CourierError/cancelled(url:)``.
    public func cancel() {
        task.cancel()
    }
}

extension TransferHandle where Value == Data {
    /// Waits for the end and decodes the JSON body as `type`, validated as
    /// ``DecodableResponseSerializer`` does (status 200..<300, a JSON content type, an empty
    /// body only for 204/205), with no `HTTPURLResponse` made for a valid response.
    /// - Throws: the transfer's error, or the validation or decoding error.
    public func decoded<T: Decodable & Sendable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws
        -> HTTPTypesResponse<T>
    {
        let outcome = try await completion.wait(cancelling: task).get().engineHeadOutcome(of: task)
        let value = try outcome.decode(type, makeDecoder: { decoder })
        return try outcome.typed(value)
    }

    /// Waits for the end and returns what `serializer` makes of the body (it is handed an
    /// `HTTPURLResponse` made for it).
    /// - Throws: the transfer's error, or the serializer's.
    public func serialized<S: ResponseSerializer>(by serializer: S) async throws -> HTTPTypesResponse<S.Output> {
        let outcome = try await completion.wait(cancelling: task).get().engineHeadOutcome(of: task)
        let value = try outcome.serialized(by: serializer)
        return try outcome.typed(value)
    }
}

extension TransferHandle where Value == URL {
    /// Cancels the download and keeps what arrived: returns the resume data (nil when nothing
    /// usable arrived or the download already ended) once the transfer has stopped. Pass it to
    /// ``URLSessionManager/download(resumingWith:to:interceptor:)``. Awaiting ``response`` then throws
    /// ``CourierError/cancelled(url:)``.
    public func cancelProducingResumeData() async -> DownloadResumeData? {
        guard let download = task as? DownloadTask else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<DownloadResumeData?, Never>) in
            download.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
        }
    }

    /// What it takes to continue this download after it failed part-way (a lost connection)
    /// or was cancelled with ``cancelProducingResumeData()``; nil otherwise.
    public var resumeData: DownloadResumeData? { (task as? DownloadTask)?.resumeData }
}

/// One transfer's progress in one direction, as an async sequence of ``TransferProgress``
/// values: the current value, then every change (the newest one when the consumer is slower
/// than the transfer), ending when the transfer ends. The last value is always the transfer's
/// final count, even when the session coalesced its updates. Iterate it once.
public struct TransferProgressSequence: AsyncSequence, Sendable {
    /// A progress value.
    public typealias Element = TransferProgress

    private let task: SessionTask
    private let direction: TransferProgress.Direction
    private let updates: AsyncStream<TransferProgress>

    init(task: SessionTask, direction: TransferProgress.Direction) {
        self.task = task
        self.direction = direction
        self.updates = task.progressUpdates(direction)  // now, before the task is resumed
    }

    /// Iterates the values.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var base: AsyncStream<TransferProgress>.AsyncIterator
        fileprivate let task: SessionTask
        fileprivate let direction: TransferProgress.Direction
        fileprivate var last: TransferProgress?
        fileprivate var ended = false

        /// The next value, or nil once the transfer has ended and its final value was given.
        public mutating func next() async -> TransferProgress? {
            if ended { return nil }
            if let value = await base.next() {
                last = value
                return value
            }
            ended = true
            let final = finalValue()
            guard let final, final.completedUnitCount > (last?.completedUnitCount ?? -1) else { return nil }
            return final
        }

        /// The task's final count, should the updates have stopped short of it.
        private func finalValue() -> TransferProgress? {
            let (completed, expected) = direction == .upload
                ? (task.countOfBytesSent, task.countOfBytesExpectedToSend)
                : (task.countOfBytesReceived, task.countOfBytesExpectedToReceive)
            let total = expected >= 0 ? expected : (last?.totalUnitCount ?? -1)
            return TransferProgress(direction: direction, completedUnitCount: completed, totalUnitCount: total)
        }
    }

    /// Makes the iterator (iterate once).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: updates.makeAsyncIterator(), task: task, direction: direction)
    }
}

/// The end of a transfer, kept for any number of waiters.
final class TransferCompletion<Value: Sendable>: Sendable {
    /// What a transfer ended with: the value and the final response's head.
    struct Outcome: Sendable {
        var value: Value
        var head: HTTPResponseHead
        var url: URL
        var metrics: EngineMetrics?

        var response: HTTPTypesResponse<Value> {
            get throws {
                try HTTPTypesResponse(value: value, head: head, url: url, metrics: metrics)
            }
        }
    }

    private struct State {
        var result: Result<Outcome, any Error>?
        var waiters: [CheckedContinuation<Result<Outcome, any Error>, Never>] = []
    }

    private let state = Mutex(State())

    /// Records the end (the first call wins) and wakes every waiter.
    func resolve(_ result: Result<Outcome, any Error>) {
        let waiters: [CheckedContinuation<Result<Outcome, any Error>, Never>] = state.withLock { state in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        // Not through ResumeBatch: the transfer's end runs on the processing queue (its
        // finisher), never on an event loop, so there is no loop tick to batch the resumes on.
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// The end, once it is there; cancelling the waiting Swift task cancels `task`.
    func wait(cancelling task: SessionTask) async -> Result<Outcome, any Error> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Outcome, any Error>, Never>) in
                let ready: Result<Outcome, any Error>? = state.withLock { state in
                    if let result = state.result { return result }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            task.cancel()
        }
    }
}

extension TransferCompletion.Outcome where Value == Data {
    /// The outcome of `task` as the engine-head path's, for decoding or serializing.
    func engineHeadOutcome(of task: SessionTask) -> URLSessionManager.EngineHeadOutcome {
        URLSessionManager.EngineHeadOutcome(data: value, head: head, url: url, metrics: metrics, task: task)
    }
}
