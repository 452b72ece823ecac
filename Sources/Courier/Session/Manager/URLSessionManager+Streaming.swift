public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import HTTPTypes
import NIOCore
import Synchronization

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
    /// is on the task. Makes no `HTTPURLResponse` (the task keeps the engine head: no serializer runs).
    func startStream(
        _ request: URLRequest, body: RequestBody?, taskDescription: String? = nil, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> ResponseBodyStream {
        let stream = ResponseBodyStream()
        let queue = processingQueue
        let setup = TaskSetup(
            completion: { _, _, error in stream.finish(error: error, url: request.url) },
            serializer: StreamedBodySerializer(),
            finisher: { work in queue.async(execute: work) },
            keepsEngineHead: true)
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
