public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import HTTPTypes
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

extension URLSessionManager {
    /// Runs `request` as a data task and returns as soon as the final response head arrives
    /// (after redirects and authentication, as for any task); the body then streams through
    /// the returned ``ResponseBodyStream`` with backpressure, never gathered in memory, so
    /// ``SessionConfiguration/maximumResponseBodySize`` does not apply.
    ///
    /// The task is a ``DataTask`` in ``tasks`` like any other: cookies, the security policy,
    /// hooks, event monitors and notifications apply. No response serializer runs: check the
    /// status code yourself. Cancelling the calling Swift task (before the head) or the
    /// iteration (after it) cancels the request.
    ///
    /// ```swift
    /// let (response, body) = try await manager.bytes(for: URLRequest(url: url))
    /// for try await chunk in body { FileHandle.standardOutput.write(chunk) }
    /// ```
    /// - Parameters:
    ///   - request: the request; its `httpBody` or `httpBodyStream` is sent unless `body` is given.
    ///   - body: a body to send instead (an engine ``CourierEngine/RequestBody``, e.g.
    ///     `.file(path:)` to upload a file streamed from disk). Default nil.
    ///   - interceptor: adapts each attempt and decides retries for this request only, after
    ///     the manager's ``URLSessionManager/interceptor`` (default nil). A streamed task is
    ///     retried only while no response head has arrived (the head is the caller's at once).
    /// - Throws: the task's error (a ``CourierError``) when it fails before the head.
    public func bytes(for request: URLRequest, body: RequestBody? = nil, interceptor: (any RequestInterceptor)? = nil) async throws
        -> (HTTPURLResponse, ResponseBodyStream)
    {
        let stream = try await startStream(request, body: body, interceptor: interceptor)
        guard let response = stream.task?.response else {
            stream.cancel()
            throw CourierError.connectionLost(url: request.url, reason: "no response head")
        }
        return (response, stream)
    }

    /// Starts a streaming task and returns the caller's face of its body once the final head
    /// is on the task. Makes no `HTTPURLResponse` (the task is head-only: no serializer runs).
    func startStream(
        _ request: URLRequest, body: RequestBody?, taskDescription: String? = nil, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> ResponseBodyStream {
        let stream = ResponseBodyStream()
        let queue = processingQueue
        let setup = TaskSetup(
            completion: { _, _, error in stream.finish(error: error, url: request.url) },
            serializer: StreamedBodySerializer(),
            finisher: { work in queue.async(execute: work) },
            deliversHeadOnly: true)
        let task = register(
            { DataTask(taskIdentifier: $0, request: request) }, kind: .stream(stream), body: body ?? Self.body(of: request), setup: setup)
        stream.attach(task)
        if let taskDescription { task.taskDescription = taskDescription }
        if let interceptor { task.snapshot.withLock { $0.interceptor = interceptor } }
        let callers = stream.callersFace()
        task.resume()
        if Task.isCancelled { task.cancel() }
        try await callers.waitForHead()
        return callers
    }
}

/// Streaming with swift-http-types metadata: the status and fields come as `HTTPResponse` as
/// soon as the final head arrives (after redirects and authentication), before any of the
/// body, which then streams through ``ResponseBodyStream`` (chunks, ``ResponseBodyStream/lines``
/// or ``ResponseBodyStream/events``) with backpressure. For server-sent events, long polls
/// and bodies of any size.
extension URLSessionManager {
    /// Sends `request` with `body` and returns at the final response head; see
    /// ``bytes(for:body:interceptor:)`` for what applies. ``HTTPTypesResponse/metrics`` is nil (the
    /// exchange is still running; ``ResponseBodyStream/task`` has them at the end).
    ///
    /// ```swift
    /// let request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/events")
    /// let feed = try await manager.stream(for: request)
    /// for try await event in feed.body.events { print(event.data) }
    /// ```
    /// - Parameter request: the request to send.
    /// - Parameter body: the request body; nil for none.
    /// - Parameter interceptor: for this request only, after the manager's (default nil); see
    ///   ``bytes(for:body:interceptor:)``.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a request without scheme
    ///   or authority; the task's error when it fails before the head. Any status is returned.
    public func stream(for request: HTTPRequest, body: Data? = nil, interceptor: (any RequestInterceptor)? = nil) async throws
        -> HTTPTypesResponse<ResponseBodyStream>
    {
        try await streamed(ResponseHeadBridge.urlRequest(from: request, body: body), body: nil, interceptor: interceptor)
    }

    /// ``stream(for:body:interceptor:)`` with the request body (nil for none) streamed from an engine ``CourierEngine/RequestBody``
    /// (``CourierEngine/RequestBody/sequence(_:length:)`` for an async sequence of chunks, with
    /// backpressure; `.file(path:)`; `.data(_:)`): streaming both ways. The body's length, when
    /// known, becomes `Content-Length` (a `Content-Length` field in `request` is ignored);
    /// otherwise it is sent chunked. A streamed body is consumed once, so a redirect that must
    /// resend it (307, 308) or a retry fails with ``CourierError/requestBodyNotReplayable(url:)``.
    ///
    /// ```swift
    /// let (chunks, feed) = AsyncStream<Data>.makeStream()
    /// let request = HTTPRequest(method: .post, scheme: "https", authority: "example.com", path: "/upload")
    /// async let echo = manager.stream(for: request, uploading: .sequence(chunks, length: nil))
    /// feed.yield(Data("hello".utf8)); feed.finish()
    /// for try await chunk in try await echo.body { print(chunk.count) }
    /// ```
    /// - Parameter request: the request to send.
    /// - Parameter body: the request body, streamed; nil for none.
    /// - Parameter taskDescription: set as the task's ``SessionTask/taskDescription`` before it
    ///   starts (instead of the manager's tag that every task gets), so hooks and monitors
    ///   (metrics, completion) can tell the task apart. Default nil: the manager's tag.
    /// - Parameter interceptor: for this request only, after the manager's (default nil); a
    ///   single-pass body is never retried.
    /// - Throws: as ``stream(for:body:interceptor:)``.
    public func stream(
        for request: HTTPRequest, uploading body: RequestBody?, taskDescription: String? = nil, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<ResponseBodyStream> {
        try await streamed(
            ResponseHeadBridge.urlRequest(from: request, body: nil), body: body, taskDescription: taskDescription,
            interceptor: interceptor)
    }

    /// ``bytes(for:body:interceptor:)`` with the head as `HTTPResponse`.
    func streamed(
        _ request: URLRequest, body: RequestBody?, taskDescription: String? = nil, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<ResponseBodyStream> {
        let stream = try await startStream(request, body: body, taskDescription: taskDescription, interceptor: interceptor)
        guard let (head, url) = stream.task?.snapshot.withLock({ state in state.head.flatMap { head in state.responseURL.map { (head, $0) } } })
        else {
            stream.cancel()
            throw CourierError.connectionLost(url: request.url, reason: "no response head")
        }
        do {
            return try HTTPTypesResponse(value: stream, head: head, url: url, metrics: nil)
        } catch {
            stream.cancel()
            throw error
        }
    }
}

extension HTTPSessionManager {
    /// `method` (default GET) on `urlString` through ``requestSerializer``, returning at the
    /// final response head with the body to stream; see ``URLSessionManager/stream(for:body:interceptor:)``.
    ///
    /// ```swift
    /// let poll = try await manager.stream("drip", parameters: ["duration": 5, "numbytes": 5])
    /// print(poll.status)                                   // before the body
    /// for try await chunk in poll.body { print(chunk.count) }
    /// ```
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL or parameters;
    ///   the task's error when it fails before the head. Any status is returned.
    public func stream(
        _ urlString: String, method: String = "GET", parameters: Parameters? = nil, headers: [String: String]? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<ResponseBodyStream> {
        try await streamed(
            makeRequest(method: method, urlString: urlString, parameters: parameters, headers: headers), body: nil,
            interceptor: interceptor)
    }
}

extension HTTPTypesResponse where Value == ResponseBodyStream {
    /// The body still to come (the same as ``value``).
    public var body: ResponseBodyStream { value }
}
