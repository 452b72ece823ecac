import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import HTTPTypes
import NIOHTTP1
import Synchronization

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
        let outcome = try await runKeepingEngineHead(ResponseHeadBridge.urlRequest(from: request, body: body), interceptor: interceptor)
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
        let outcome = try await runKeepingEngineHead(ResponseHeadBridge.urlRequest(from: request, body: body), interceptor: interceptor)
        let value = try outcome.decode(type, makeDecoder: makeDecoder)
        return try outcome.typed(value)
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
        let outcome = try await runKeepingEngineHead(request, interceptor: interceptor)
        let value = try outcome.decode(type, makeDecoder: makeDecoder)
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
        let outcome = try await runKeepingEngineHead(request, interceptor: interceptor)
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
        let outcome = try await runKeepingEngineHead(request, interceptor: interceptor)
        let value = try outcome.serialized(by: serializer)
        return try outcome.typed(value)
    }
}
