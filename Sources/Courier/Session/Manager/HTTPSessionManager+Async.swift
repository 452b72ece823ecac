#if canImport(FoundationNetworking)
public import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import Synchronization

/// A response and what a serializer made of it, with the `HTTPURLResponse` (the result of
/// ``URLSessionManager/data(for:serializer:interceptor:)``, AFNetworking's shape awaited). The typed
/// verbs return ``HTTPTypesResponse`` instead, which makes no Foundation response.
public struct SessionResponse<Value: Sendable>: Sendable {
    /// The serializer's output.
    public var value: Value
    /// The HTTP response.
    public var response: HTTPURLResponse
}

/// The Swift-concurrency shape of every request: the same tasks underneath, awaited.
/// Cancelling the awaiting Swift task cancels the request.
extension URLSessionManager {
    /// Runs `request` and returns the response with the manager's serializer's object
    /// (nil when the serializer gives none).
    /// - Throws: the transport or serialization error (a ``CourierError``).
    public func data(for request: URLRequest) async throws -> (object: (any Sendable)?, response: HTTPURLResponse) {
        try await run(request, serializer: nil, interceptor: nil)
    }

    /// Runs `request` and parses the body with `serializer` (instead of the manager's).
    /// - Parameter request: the request to send.
    /// - Parameter serializer: validates the response and parses its body.
    /// - Parameter interceptor: adapts and retries this request only, after the manager's
    ///   ``URLSessionManager/interceptor`` (default nil: the manager's alone).
    /// - Throws: the transport error, an adapt error, or the serializer's validation or parsing error.
    public func data<S: ResponseSerializer>(for request: URLRequest, serializer: S, interceptor: (any RequestInterceptor)? = nil)
        async throws -> SessionResponse<S.Output>
    {
        let (object, response) = try await run(request, serializer: serializer, interceptor: interceptor)
        if let value = object as? S.Output {
            return SessionResponse(value: value, response: response)
        }
        // A nil object for an optional output type (an empty JSON body, say).
        let nothing: Any = Optional<Int>.none as Any
        if object == nil, let value = nothing as? S.Output {
            return SessionResponse(value: value, response: response)
        }
        throw CourierError.responseSerializationFailed(
            reason: "the serializer produced no \(S.Output.self)", response: response, data: nil, underlying: nil)
    }

    /// One implementation under both shapes: a data task whose end (serializer, completion,
    /// notification) runs in the awaiting Swift task instead of on the manager's queues, which
    /// saves two thread hops per request; the completion only records the result. `interceptor`
    /// is the task's own, set before it starts (as ``dataTask(with:interceptor:uploadProgress:downloadProgress:completionHandler:)`` does).
    func run(_ request: URLRequest, serializer: (any ResponseSerializer)?, interceptor: (any RequestInterceptor)?) async throws
        -> (object: (any Sendable)?, response: HTTPURLResponse)
    {
        if interceptor == nil, environment.runsAwaitedTasksDirectly {
            return try await runDirectly(request, serializer: serializer)
        }
        let outcome = Mutex<Result<(object: (any Sendable)?, response: HTTPURLResponse), any Error>?>(nil)
        let setup = TaskSetup(
            completion: { response, object, error in
                let result: Result<(object: (any Sendable)?, response: HTTPURLResponse), any Error>
                if let error {
                    result = .failure(error)
                } else if let response {
                    result = .success((object, response))
                } else {
                    result = .failure(CourierError.connectionLost(url: request.url, reason: "no response"))
                }
                outcome.withLock { $0 = result }
            },
            serializer: serializer)
        await awaitDataTask(request, setup: setup, interceptor: interceptor)
        guard let result = outcome.withLock({ $0 }) else {
            throw CourierError.connectionLost(url: request.url, reason: "the task ended without a result")
        }
        return try result.get()
    }

    /// ``run(_:serializer:interceptor:)`` on a ``DirectTaskRunner``: the same task, serializer,
    /// notifications and result, without a ``TaskDelegate``.
    private func runDirectly(_ request: URLRequest, serializer: (any ResponseSerializer)?) async throws
        -> (object: (any Sendable)?, response: HTTPURLResponse)
    {
        let (task, runner) = registerDirectTask(request)
        let ended = await runner.exchange()
        let serializer = serializer ?? environment.responseSerializer
        var object: (any Sendable)?
        var error: (any Error)? = ended.error
        let response = ended.hasResponse ? task.response : nil
        if error == nil {
            (object, error) = serializer.serializeForCompletion(response, data: ended.data)
        }
        runner.finish(response: response, object: object, error: error, data: ended.data, serializer: serializer)
        if let error { throw error }
        guard let response else { throw CourierError.connectionLost(url: request.url, reason: "no response") }
        return (object, response)
    }

    /// Registers a data task for `request` made with `setup`, whose end (serialization,
    /// completion, notification) runs here, in the awaiting Swift task (this sets the `setup`'s
    /// finisher); starts it and returns it once that end has run (nil only if it was never
    /// made). `interceptor` is the task's own, set before it starts (as
    /// ``dataTask(with:interceptor:uploadProgress:downloadProgress:completionHandler:)`` does);
    /// `registered` sees the task before it starts. Cancelling the awaiting Swift task cancels
    /// the task, which then ends as cancelled.
    @discardableResult
    func awaitDataTask(
        _ request: URLRequest, setup: TaskSetup, interceptor: (any RequestInterceptor)?,
        registered: (@Sendable (DataTask) -> Void)? = nil
    ) async -> DataTask? {
        let box = Mutex<DataTask?>(nil)
        let finish: @Sendable () -> Void = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<@Sendable () -> Void, Never>) in
                var setup = setup
                setup.finisher = { work in ResumeBatch.run { continuation.resume(returning: work) } }
                let task = register(
                    { DataTask(taskIdentifier: $0, request: request) }, kind: .data, body: Self.body(of: request), setup: setup)
                if let interceptor { task.snapshot.withLock { $0.interceptor = interceptor } }
                box.withLock { $0 = task }
                registered?(task)
                task.resume()
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            box.withLock { $0 }?.cancel()
        }
        finish()
        return box.withLock { $0 }
    }
}

extension HTTPSessionManager {
    /// GET `urlString` and return what the manager's response serializer made of it, with the
    /// `HTTPURLResponse` (AFNetworking's shape, awaited). For typed results without a
    /// Foundation response, use ``get(_:parameters:headers:as:decoder:interceptor:)``.
    public func get(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> (object: (any Sendable)?, response: HTTPURLResponse) {
        try await run(
            makeRequest(method: "GET", urlString: urlString, parameters: parameters, headers: headers), serializer: nil,
            interceptor: interceptor)
    }

    /// POST and return the manager's serializer's object with the `HTTPURLResponse`
    /// (AFNetworking's shape, awaited).
    public func post(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> (object: (any Sendable)?, response: HTTPURLResponse) {
        try await run(
            makeRequest(method: "POST", urlString: urlString, parameters: parameters, headers: headers), serializer: nil,
            interceptor: interceptor)
    }
}

/// The typed async verbs: every method, with a result decoded as `T` (``DecodableResponseSerializer``'s
/// validation: status 200..<300, a JSON content type, an empty body only for 204/205) or made
/// by a serializer passed to the call (the manager's ``URLSessionManager/responseSerializer``
/// is neither used nor changed), and a body from `parameters` (through
/// ``HTTPSessionManager/requestSerializer``) or from any `Encodable` value (through a
/// ``RequestBodyEncoder``).
///
/// The result is an ``HTTPTypesResponse``: status and fields as swift-http-types'
/// `HTTPResponse`, the final URL, the metrics and the value. A decoded call never makes an
/// `HTTPURLResponse` when the response is valid (one is made only for the error of an invalid
/// one, which carries it); neither does a `serializer:` call with a built-in serializer (its
/// validation reads the head), while any other serializer is handed one, because
/// ``ResponseSerializer/responseObject(for:data:)`` takes it. `task.response` still makes one
/// lazily for anyone who reads it.
///
/// Every call takes an optional `interceptor` (default nil) for that request only: it adapts
/// each attempt and decides retries (``RequestInterceptor``), after the manager's
/// ``URLSessionManager/interceptor``; the call returns (or throws) the last attempt's result,
/// or the adapt error.
///
/// ```swift
/// let user = try await manager.get("users/1", as: User.self, interceptor: RetryPolicy())
/// ```
///
/// Cancelling the awaiting Swift task cancels the request on the wire; the call then throws
/// ``CourierError/cancelled(url:)``. Redirects, authentication, cookies, the security policy,
/// hooks, monitors and notifications apply as to every task.
extension HTTPSessionManager {
    // MARK: - Any method

    /// `method` on `urlString` (resolved against ``baseURL``), `parameters` serialized by
    /// ``requestSerializer`` (in the query for GET, HEAD and DELETE, else in the body),
    /// `headers` applied last; the JSON body decoded as `type` with `decoder`.
    ///
    /// ```swift
    /// let user = try await manager.request("GET", "users/1", as: User.self)
    /// print(user.status.code, user.value.name)
    /// ```
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL or parameters;
    ///   the transport error; the validation or decoding error (``CourierError/unacceptableStatusCode(response:data:underlying:)``,
    ///   ``CourierError/unacceptableContentType(_:response:data:)``, ``CourierError/responseSerializationFailed(reason:response:data:underlying:)``).
    public func request<T: Decodable & Sendable>(
        _ method: String, _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        as type: T.Type, decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        let request = try makeRequest(method: method, urlString: urlString, parameters: parameters, headers: headers)
        return try await decoded(request, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// `method` with `parameters`, the response made by `serializer` (for this call only).
    /// The serializer is handed an `HTTPURLResponse` made for it (its protocol takes one).
    ///
    /// ```swift
    /// let page = try await manager.request("GET", "html", serializer: StringResponseSerializer())
    /// ```
    /// - Throws: as ``request(_:_:parameters:headers:as:decoder:interceptor:)``, with the serializer's
    ///   own validation and parsing errors.
    public func request<S: ResponseSerializer>(
        _ method: String, _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        let request = try makeRequest(method: method, urlString: urlString, parameters: parameters, headers: headers)
        let outcome = try await runHeadOnly(request, interceptor: interceptor)
        let value = try outcome.serialized(by: serializer)
        return try outcome.typed(value)
    }

    /// `method` with `body` encoded by `encoder` (default a plain `JSONEncoder`) as the request
    /// body, exactly the bytes the encoder returns (no re-serialization: key order, formatting
    /// and top-level arrays are the encoder's), with `Content-Type` from the encoder unless
    /// `headers` set one; the JSON response decoded as `type`. The request serializer's
    /// headers (`User-Agent`, `Accept-Language`, authorization, ...) and timeout apply.
    ///
    /// ```swift
    /// let created = try await manager.request("POST", "items", body: [Item(name: "a")], as: Created.self)
    /// ```
    /// - Throws: ``CourierError/RequestSerializationReason/bodyEncodingFailed(_:)`` (in
    ///   ``CourierError/requestSerializationFailed(_:)``) when encoding fails, nothing sent;
    ///   otherwise as ``request(_:_:parameters:headers:as:decoder:interceptor:)``.
    public func request<Body: Encodable, T: Decodable & Sendable>(
        _ method: String, _ urlString: String, body: Body, encoder: any RequestBodyEncoder = JSONEncoder(),
        headers: [String: String]? = nil, as type: T.Type, decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        let request = try makeRequest(method: method, urlString: urlString, body: body, encoder: encoder, headers: headers)
        return try await decoded(request, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// `method` with an `Encodable` `body` (see ``request(_:_:body:encoder:headers:as:decoder:interceptor:)``),
    /// the response made by `serializer` (for this call only).
    public func request<Body: Encodable, S: ResponseSerializer>(
        _ method: String, _ urlString: String, body: Body, encoder: any RequestBodyEncoder = JSONEncoder(),
        headers: [String: String]? = nil, serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        let request = try makeRequest(method: method, urlString: urlString, body: body, encoder: encoder, headers: headers)
        let outcome = try await runHeadOnly(request, interceptor: interceptor)
        let value = try outcome.serialized(by: serializer)
        return try outcome.typed(value)
    }

    // MARK: - The verbs

    /// GET, decoded as `type`. See ``request(_:_:parameters:headers:as:decoder:interceptor:)``.
    ///
    /// ```swift
    /// let slideshow = try await manager.get("json", as: Slideshow.self)
    /// print(slideshow.status, slideshow.value.slideshow.title)
    /// ```
    public func get<T: Decodable & Sendable>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil, as type: T.Type,
        decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        try await request(
            "GET", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// GET, made by `serializer`. See ``request(_:_:parameters:headers:serializer:interceptor:)``.
    public func get<S: ResponseSerializer>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        try await request(
            "GET", urlString, parameters: parameters, headers: headers, serializer: serializer, interceptor: interceptor)
    }

    /// HEAD: the status and fields, no body. A status outside 200..<300 throws
    /// ``CourierError/unacceptableStatusCode(response:data:underlying:)`` (as the block shape's
    /// failure gets); a valid response makes no `HTTPURLResponse`.
    public func head(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<Void> {
        let request = try makeRequest(method: "HEAD", urlString: urlString, parameters: parameters, headers: headers)
        let outcome = try await runHeadOnly(request, interceptor: interceptor)
        try outcome.validateStatus()
        return try outcome.typed(())
    }

    /// POST with `parameters` (form-encoded by the default ``requestSerializer``), decoded as `type`.
    public func post<T: Decodable & Sendable>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil, as type: T.Type,
        decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        try await request(
            "POST", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// POST with `parameters`, made by `serializer`.
    public func post<S: ResponseSerializer>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        try await request(
            "POST", urlString, parameters: parameters, headers: headers, serializer: serializer, interceptor: interceptor)
    }

    /// POST an `Encodable` body (see ``request(_:_:body:encoder:headers:as:decoder:interceptor:)``), decoded as `type`.
    ///
    /// ```swift
    /// let echo = try await manager.post("anything", body: ["b": 1, "a": 2], encoder: sortedEncoder, as: Echo.self)
    /// ```
    public func post<Body: Encodable, T: Decodable & Sendable>(
        _ urlString: String, body: Body, encoder: any RequestBodyEncoder = JSONEncoder(), headers: [String: String]? = nil,
        as type: T.Type, decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        try await request(
            "POST", urlString, body: body, encoder: encoder, headers: headers, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// POST an `Encodable` body, the response made by `serializer`.
    public func post<Body: Encodable, S: ResponseSerializer>(
        _ urlString: String, body: Body, encoder: any RequestBodyEncoder = JSONEncoder(), headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        try await request(
            "POST", urlString, body: body, encoder: encoder, headers: headers, serializer: serializer, interceptor: interceptor)
    }

    /// PUT with `parameters`, decoded as `type`.
    public func put<T: Decodable & Sendable>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil, as type: T.Type,
        decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        try await request(
            "PUT", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// PUT with `parameters`, made by `serializer`.
    public func put<S: ResponseSerializer>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        try await request(
            "PUT", urlString, parameters: parameters, headers: headers, serializer: serializer, interceptor: interceptor)
    }

    /// PUT an `Encodable` body, decoded as `type`.
    public func put<Body: Encodable, T: Decodable & Sendable>(
        _ urlString: String, body: Body, encoder: any RequestBodyEncoder = JSONEncoder(), headers: [String: String]? = nil,
        as type: T.Type, decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        try await request(
            "PUT", urlString, body: body, encoder: encoder, headers: headers, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// PUT an `Encodable` body, the response made by `serializer`.
    public func put<Body: Encodable, S: ResponseSerializer>(
        _ urlString: String, body: Body, encoder: any RequestBodyEncoder = JSONEncoder(), headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        try await request(
            "PUT", urlString, body: body, encoder: encoder, headers: headers, serializer: serializer, interceptor: interceptor)
    }

    /// PATCH with `parameters`, decoded as `type`.
    public func patch<T: Decodable & Sendable>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil, as type: T.Type,
        decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        try await request(
            "PATCH", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// PATCH with `parameters`, made by `serializer`.
    public func patch<S: ResponseSerializer>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        try await request(
            "PATCH", urlString, parameters: parameters, headers: headers, serializer: serializer, interceptor: interceptor)
    }

    /// PATCH an `Encodable` body, decoded as `type`.
    public func patch<Body: Encodable, T: Decodable & Sendable>(
        _ urlString: String, body: Body, encoder: any RequestBodyEncoder = JSONEncoder(), headers: [String: String]? = nil,
        as type: T.Type, decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        try await request(
            "PATCH", urlString, body: body, encoder: encoder, headers: headers, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// PATCH an `Encodable` body, the response made by `serializer`.
    public func patch<Body: Encodable, S: ResponseSerializer>(
        _ urlString: String, body: Body, encoder: any RequestBodyEncoder = JSONEncoder(), headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        try await request(
            "PATCH", urlString, body: body, encoder: encoder, headers: headers, serializer: serializer, interceptor: interceptor)
    }

    /// DELETE with `parameters` (in the query), decoded as `type`.
    public func delete<T: Decodable & Sendable>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil, as type: T.Type,
        decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        try await request(
            "DELETE", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder, interceptor: interceptor)
    }

    /// DELETE with `parameters`, made by `serializer`.
    public func delete<S: ResponseSerializer>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        try await request(
            "DELETE", urlString, parameters: parameters, headers: headers, serializer: serializer, interceptor: interceptor)
    }

    // MARK: - Building

    /// The request for an `Encodable` body: the request serializer's request for `method` on
    /// `urlString` without parameters, the encoder's bytes as the body, its content type
    /// unless `headers` give one, then `headers`.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` (a bad URL, or
    ///   ``CourierError/RequestSerializationReason/bodyEncodingFailed(_:)``).
    public func makeRequest<Body: Encodable>(
        method: String, urlString: String, body: Body, encoder: any RequestBodyEncoder, headers: [String: String]?
    ) throws -> URLRequest {
        var request = try makeRequest(method: method, urlString: urlString, parameters: nil, headers: nil)
        do {
            request.httpBody = try encoder.encode(body)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError.requestSerializationFailed(.bodyEncodingFailed(String(describing: error)))
        }
        request.setValue(encoder.contentType, forHTTPHeaderField: "Content-Type")
        for (name, value) in headers ?? [:] {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return request
    }

    /// Runs `request` with no `HTTPURLResponse` made for a valid response, decoding as `type`.
    func decoded<T: Decodable & Sendable>(
        _ request: URLRequest, as type: T.Type, decoder: JSONDecoder, interceptor: (any RequestInterceptor)?
    ) async throws
        -> HTTPTypesResponse<T>
    {
        let outcome = try await runHeadOnly(request, interceptor: interceptor)
        let value = try outcome.decode(type, makeDecoder: { decoder })
        return try outcome.typed(value)
    }
}

/// The typed calls for a `URLRequest` you built yourself (any method, any body), on every
/// manager: the same results as the ``HTTPSessionManager`` verbs, with the same optional
/// per-request `interceptor` (after the manager's ``URLSessionManager/interceptor``).
extension URLSessionManager {
    /// Sends `request` and decodes the JSON body as `type` (``DecodableResponseSerializer``'s
    /// validation), returning swift-http-types metadata; a valid response makes no
    /// `HTTPURLResponse`. Cancelling the awaiting Swift task cancels the request.
    ///
    /// ```swift
    /// var request = URLRequest(url: url)
    /// request.httpMethod = "PUT"
    /// let saved = try await manager.response(for: request, as: Saved.self)
    /// ```
    /// - Throws: the transport error, or the validation or decoding error.
    public func response<T: Decodable & Sendable>(
        for request: URLRequest, as type: T.Type, decoder: JSONDecoder = JSONDecoder(), interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<T> {
        let outcome = try await runHeadOnly(request, interceptor: interceptor)
        let value = try outcome.decode(type, makeDecoder: { decoder })
        return try outcome.typed(value)
    }

    /// Sends `request` and returns what `serializer` makes of the response (for this call
    /// only; a serializer of yours is handed an `HTTPURLResponse` made for it, a built-in one
    /// reads the response head and needs one only for an error).
    /// - Throws: the transport error, or the serializer's.
    public func response<S: ResponseSerializer>(
        for request: URLRequest, serializer: S, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> HTTPTypesResponse<S.Output> {
        let outcome = try await runHeadOnly(request, interceptor: interceptor)
        let value = try outcome.serialized(by: serializer)
        return try outcome.typed(value)
    }
}

extension URLSessionManager.HeadOnlyOutcome {
    /// Throws ``HTTPResponseSerializer``'s status error for a status outside 200..<300 (an
    /// `HTTPURLResponse` is made only then, for the error).
    func validateStatus() throws {
        guard !(200..<300).contains(Int(head.status.code)) else { return }
        try HTTPResponseSerializer().validate(response, data: data)
    }

    /// What `serializer` makes of the body: a built-in serializer reads the head (an
    /// `HTTPURLResponse` is made only for an error it throws), any other is given one; an error
    /// that is not a ``CourierError`` becomes ``CourierError/responseSerializationFailed(reason:response:data:underlying:)``.
    func serialized<S: ResponseSerializer>(by serializer: S) throws -> S.Output {
        // A built-in serializer reads the head: an HTTPURLResponse is made only for an error.
        if let builtIn = serializer as? any InputSerializing {
            let task = self.task
            let input = ResponseHeadBridge.serializerInput(head, response: { task.response })
            if let output = try builtIn.responseObject(for: input, data: data, as: S.Output.self) {
                return output
            }
        }
        let response = self.response
        do {
            return try serializer.responseObject(for: response, data: data)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError.responseSerializationFailed(
                reason: String(describing: error), response: response, data: data, underlying: nil)
        }
    }
}
