import CourierEngine
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import Synchronization

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
        if interceptor == nil, case .direct(let monitored) = environment.awaitedTaskRunner {
            return try await runDirectly(request, serializer: serializer, monitored: monitored)
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
    private func runDirectly(_ request: URLRequest, serializer: (any ResponseSerializer)?, monitored: Bool) async throws
        -> (object: (any Sendable)?, response: HTTPURLResponse)
    {
        let (task, runner) = registerDirectTask(request, monitored: monitored)
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
