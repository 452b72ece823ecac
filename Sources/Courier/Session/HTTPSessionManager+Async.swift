#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import Synchronization

/// A response and what a serializer made of it.
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
        try await run(request, serializer: nil)
    }

    /// Runs `request` and parses the body with `serializer` (instead of the manager's).
    /// - Throws: the transport error, or the serializer's validation or parsing error.
    public func data<S: ResponseSerializer>(for request: URLRequest, serializer: S) async throws -> SessionResponse<S.Output> {
        let (object, response) = try await run(request, serializer: serializer)
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
    /// saves two thread hops per request; the completion only records the result.
    private func run(_ request: URLRequest, serializer: (any ResponseSerializer)?) async throws
        -> (object: (any Sendable)?, response: HTTPURLResponse)
    {
        let box = Mutex<DataTask?>(nil)
        let outcome = Mutex<Result<(object: (any Sendable)?, response: HTTPURLResponse), any Error>?>(nil)
        let finish: @Sendable () -> Void = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<@Sendable () -> Void, Never>) in
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
                    serializer: serializer,
                    finisher: { work in continuation.resume(returning: work) })
                let task = register(
                    { DataTask(taskIdentifier: $0, request: request) }, kind: .data, body: Self.body(of: request), setup: setup)
                box.withLock { $0 = task }
                task.resume()
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            box.withLock { $0 }?.cancel()
        }
        finish()
        guard let result = outcome.withLock({ $0 }) else {
            throw CourierError.connectionLost(url: request.url, reason: "the task ended without a result")
        }
        return try result.get()
    }
}

extension HTTPSessionManager {
    /// GET `urlString` and return what the manager's response serializer made of it.
    public func get(_ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil) async throws
        -> (object: (any Sendable)?, response: HTTPURLResponse)
    {
        try await data(for: makeRequest(method: "GET", urlString: urlString, parameters: parameters, headers: headers))
    }

    /// POST and return the manager's serializer's object.
    public func post(_ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil) async throws
        -> (object: (any Sendable)?, response: HTTPURLResponse)
    {
        try await data(for: makeRequest(method: "POST", urlString: urlString, parameters: parameters, headers: headers))
    }

    /// Any method, decoding the JSON body into `type`.
    public func request<T: Decodable & Sendable>(
        _ method: String, _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        as type: T.Type
    ) async throws -> SessionResponse<T> {
        let request = try makeRequest(method: method, urlString: urlString, parameters: parameters, headers: headers)
        let decoded = try await data(for: request, serializer: DecodableResponseSerializer<T>())
        guard let value = decoded.value else {
            throw CourierError.responseSerializationFailed(
                reason: "the response had no body to decode as \(T.self)", response: decoded.response, data: nil,
                underlying: nil)
        }
        return SessionResponse(value: value, response: decoded.response)
    }

    /// GET, decoding the JSON body into `type`.
    public func get<T: Decodable & Sendable>(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil, as type: T.Type
    ) async throws -> SessionResponse<T> {
        try await request("GET", urlString, parameters: parameters, headers: headers, as: type)
    }
}
