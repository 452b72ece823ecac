#if canImport(FoundationNetworking)
public import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import Synchronization

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
        let outcome = try await runKeepingEngineHead(request, interceptor: interceptor)
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
        let outcome = try await runKeepingEngineHead(request, interceptor: interceptor)
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
        let outcome = try await runKeepingEngineHead(request, interceptor: interceptor)
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
        let outcome = try await runKeepingEngineHead(request, interceptor: interceptor)
        let value = try outcome.decode(type, makeDecoder: { decoder })
        return try outcome.typed(value)
    }
}

