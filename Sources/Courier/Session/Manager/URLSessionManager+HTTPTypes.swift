public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import HTTPTypes
import NIOHTTP1
import Synchronization

/// A response as swift-http-types describes it, with what the session made of its body. No
/// `HTTPURLResponse` is made for it (that costs ~3.5 µs per header field on Linux).
public struct HTTPTypesResponse<Value: Sendable>: Sendable {
    /// The body (``URLSessionManager/response(for:body:interceptor:)``) or the decoded value.
    public var value: Value
    /// The final response: status and fields (after redirects and answered challenges). Its
    /// fields are made from the engine's head on the first read (of this, or of
    /// ``headerFields``) and kept; reading only ``status`` makes none.
    public var response: HTTPResponse {
        get { head.response }
        set { head = LazyResponseHead(newValue) }
    }
    /// The URL the final response came from (differs from the request's after a redirect).
    public var url: URL
    /// Timings of the final exchange.
    public var metrics: EngineMetrics?

    /// The response's status.
    public var status: HTTPResponse.Status { head.status }
    /// The response's header fields, in arrival order.
    public var headerFields: HTTPFields { response.headerFields }

    /// The head behind ``response`` (internal: tests read how often its fields were made).
    private(set) var head: LazyResponseHead

    init(value: Value, head: LazyResponseHead, url: URL, metrics: EngineMetrics?) {
        self.value = value
        self.head = head
        self.url = url
        self.metrics = metrics
    }

    /// - Throws: ``CourierError/connectionLost(url:reason:)`` for a status outside 0...999.
    init(value: Value, head: HTTPResponseHead, url: consuming URL, metrics: EngineMetrics?) throws {
        let lazyHead = try LazyResponseHead(head, url: url)
        self.init(value: value, head: lazyHead, url: url, metrics: metrics)
    }
}

/// swift-http-types at the session's boundary: requests in as `HTTPRequest`, responses out as
/// `HTTPResponse`. The same task machinery as every other request (redirects, authentication,
/// cookies, the security policy, limits, notifications, hooks); the only differences are that
/// the manager's response serializer is not run (it takes an `HTTPURLResponse`) and no
/// `HTTPURLResponse` is made, except for a registered ``SessionMonitor`` (whose AFN-shaped
/// signature takes one) or a hook that asks for one (redirect, challenge, did-receive-response).
extension URLSessionManager {
    /// Sends `request` with `body` and returns the body and the final response.
    ///
    /// ```swift
    /// let request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/json")
    /// let (data, response) = try await manager.data(for: request)
    /// ```
    /// Cancelling the awaiting Swift task cancels the request.
    /// - Parameter request: the request to send.
    /// - Parameter body: the request body; nil for none.
    /// - Parameter interceptor: adapts each attempt and decides retries for this request only,
    ///   after the manager's ``URLSessionManager/interceptor`` (default nil).
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` when the request has no
    ///   scheme or authority; an adapt error; the transport error otherwise (a ``CourierError``).
    ///   Any status is returned, not thrown (no serializer validates it), after any retry.
    public func data(for request: HTTPRequest, body: Data? = nil, interceptor: (any RequestInterceptor)? = nil) async throws
        -> (Data, HTTPResponse)
    {
        let result = try await response(for: request, body: body, interceptor: interceptor)
        return (result.value, result.response)
    }

    /// Like ``data(for:body:interceptor:)``, with the final URL and the metrics.
    public func response(for request: HTTPRequest, body: Data? = nil, interceptor: (any RequestInterceptor)? = nil)
        async throws -> HTTPTypesResponse<Data>
    {
        let outcome = try await runHeadOnly(ResponseHeadBridge.urlRequest(from: request, body: body), interceptor: interceptor)
        let value = outcome.data
        return try outcome.typed(value)
    }

    /// Sends `request` and decodes the JSON body into `type`, validated as
    /// ``DecodableResponseSerializer`` does (status 200..<300, a JSON content type, an empty
    /// body only for 204 and 205): a valid response is decoded without making an
    /// `HTTPURLResponse`; an invalid one is handed to the serializer so that its error (which
    /// carries an `HTTPURLResponse`) is exactly the serializer's.
    /// - Parameter request: the request to send.
    /// - Parameter body: the request body; nil for none.
    /// - Parameter type: the `Decodable` type of the body.
    /// - Parameter makeDecoder: makes the decoder (default: a plain `JSONDecoder`).
    /// - Parameter interceptor: for this request only, after the manager's (default nil).
    /// - Throws: the transport error, an adapt error, or the serializer's validation, empty-body
    ///   or decoding error.
    public func response<T: Decodable & Sendable>(
        for request: HTTPRequest, body: Data? = nil, as type: T.Type,
        makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        let outcome = try await runHeadOnly(ResponseHeadBridge.urlRequest(from: request, body: body), interceptor: interceptor)
        let value = try outcome.decode(type, makeDecoder: makeDecoder)
        return try outcome.typed(value)
    }

    /// What a head-only task ended with.
    struct HeadOnlyOutcome {
        var data: Data
        var head: HTTPResponseHead
        var url: URL
        var metrics: EngineMetrics?
        /// The task that ran: its ``SessionTask/response`` is the `HTTPURLResponse` of `head`,
        /// made on first use and kept, which an error (or a serializer of the caller's) is given.
        var task: SessionTask

        /// The response as an `HTTPURLResponse`: the task's, made once, the same object
        /// `task.response` returns.
        var response: HTTPURLResponse? { task.response }

        /// The typed response, made of this outcome's parts (taken, not copied: the URL is
        /// often one object every request shares, and each copy is a retain threads contend on).
        consuming func typed<Value: Sendable>(_ value: Value) throws -> HTTPTypesResponse<Value> {
            try HTTPTypesResponse(value: value, head: head, url: url, metrics: metrics)
        }

        /// The fast path reads the head; anything it does not accept goes to the serializer.
        func decode<T: Decodable & Sendable>(_ type: T.Type, makeDecoder: @escaping @Sendable () -> JSONDecoder) throws -> T {
            let status = Int(head.status.code)
            if (200..<300).contains(status), let mime = ResponseHeadBridge.mimeType(of: head),
                JSONResponseSerializer.jsonContentTypes.contains(mime), !data.isBlankBody,
                let value = try? makeDecoder().decode(T.self, from: data)
            {
                return value
            }
            let response = self.response
            let result = DecodableResponseSerializer<T>(makeDecoder: makeDecoder).serializeResponse(response, data: data)
            if let error = result.error { throw error }
            guard let decoded = result.object, let value = decoded else {
                throw CourierError.responseSerializationFailed(
                    reason: "the response had no body to decode as \(T.self)", response: response, data: data,
                    underlying: nil)
            }
            return value
        }
    }

    /// Runs `request` as a data task that makes no `HTTPURLResponse` (see
    /// ``TaskSetup/deliversHeadOnly``); its end runs in the awaiting Swift task, as in the
    /// async shape. `interceptor` is the task's own, set before it starts. `registered` sees
    /// the task (tests count its responses).
    func runHeadOnly(
        _ request: URLRequest, interceptor: (any RequestInterceptor)? = nil, registered: (@Sendable (DataTask) -> Void)? = nil
    ) async throws
        -> HeadOnlyOutcome
    {
        // Two separate functions: an async function's frame holds every value either path keeps
        // across a suspension, and the delegate path's setup would more than double the direct one's.
        if interceptor == nil, environment.runsAwaitedTasksDirectly {
            return try await runDirectly(request, registered: registered)
        }
        return try await runOnDelegate(request, interceptor: interceptor, registered: registered)
    }

    /// ``runHeadOnly(_:interceptor:registered:)`` on a ``TaskDelegate`` (an interceptor, or a
    /// manager with something only a delegate does).
    private func runOnDelegate(
        _ request: URLRequest, interceptor: (any RequestInterceptor)?, registered: (@Sendable (DataTask) -> Void)?
    ) async throws -> HeadOnlyOutcome {
        let outcome = Mutex<Result<Data, any Error>?>(nil)
        let setup = TaskSetup(
            completion: { _, object, error in
                let result: Result<Data, any Error> = error.map { .failure($0) } ?? .success(object as? Data ?? Data())
                outcome.withLock { $0 = result }
            },
            deliversHeadOnly: true)
        let task = await awaitDataTask(request, setup: setup, interceptor: interceptor, registered: registered)
        guard let result = outcome.withLock({ $0 }), let task else {
            throw CourierError.connectionLost(url: request.url, reason: "the task ended without a result")
        }
        let data = try result.get()
        let (head, url, metrics) = task.snapshot.withLock { ($0.head, $0.responseURL, $0.metrics) }
        guard let head, let url else {
            throw CourierError.connectionLost(url: request.url, reason: "no response")
        }
        return HeadOnlyOutcome(data: data, head: head, url: url, metrics: metrics, task: task)
    }

    /// ``runHeadOnly(_:interceptor:registered:)`` on a ``DirectTaskRunner``: the same task,
    /// notifications and result, without a ``TaskDelegate``.
    private func runDirectly(_ request: URLRequest, registered: (@Sendable (DataTask) -> Void)?) async throws -> HeadOnlyOutcome {
        let (task, runner) = registerDirectTask(request)
        registered?(task)
        let ended = await runner.exchange()
        // As a data task's end: the raw body is the object (no serializer runs for a head-only task).
        runner.finish(response: nil, object: ended.error == nil ? ended.data : nil, error: ended.error, data: ended.data, serializer: nil)
        if let error = ended.error { throw error }
        // The final head, its URL and the metrics, read once from the task (see ``DirectTaskRunner/Ended``).
        let (head, url, metrics) = task.snapshot.withLock { ($0.head, $0.responseURL, $0.metrics) }
        guard let head, let url else {  // an end without an error had a response (DirectTaskRunner.end)
            throw CourierError.connectionLost(url: request.url, reason: "no response")
        }
        return HeadOnlyOutcome(data: ended.data, head: head, url: url, metrics: metrics, task: task)
    }
}

extension HTTPSessionManager {
    /// `method` (default GET) through the manager's request serializer (base URL, parameters, headers),
    /// decoding the JSON body into `type` and returning swift-http-types metadata; a valid
    /// response makes no `HTTPURLResponse`. The same call as
    /// ``request(_:_:parameters:headers:as:decoder:interceptor:)`` with the method as a parameter. Validation and errors
    /// are ``DecodableResponseSerializer``'s (see ``URLSessionManager/response(for:body:as:makeDecoder:interceptor:)``).
    ///
    /// ```swift
    /// let user = try await manager.fetch("users/1", as: User.self)
    /// print(user.status.code, user.value)
    /// ```
    public func fetch<T: Decodable & Sendable>(
        _ urlString: String, method: String = "GET", parameters: Parameters? = nil, headers: [String: String]? = nil,
        as type: T.Type, makeDecoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() },
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        let request = try makeRequest(method: method, urlString: urlString, parameters: parameters, headers: headers)
        let outcome = try await runHeadOnly(request, interceptor: interceptor)
        let value = try outcome.decode(type, makeDecoder: makeDecoder)
        return try outcome.typed(value)
    }
}
