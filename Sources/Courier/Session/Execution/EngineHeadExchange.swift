import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1
import Synchronization

/// The exchange behind the typed calls (``HTTPTypesResponse``, the typed verbs, transfers'
/// decoding): a data task that keeps the engine's response head and makes no `HTTPURLResponse`
/// unless something asks for one (a serializer of the caller's, an error, a monitor).
extension URLSessionManager {
    /// What a task that keeps the engine head ended with.
    struct EngineHeadOutcome {
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
    /// ``TaskSetup/keepsEngineHead``); its end runs in the awaiting Swift task, as in the
    /// async shape. `interceptor` is the task's own, set before it starts. `registered` sees
    /// the task (tests count its responses).
    func runKeepingEngineHead(
        _ request: URLRequest, interceptor: (any RequestInterceptor)? = nil, registered: (@Sendable (DataTask) -> Void)? = nil
    ) async throws
        -> EngineHeadOutcome
    {
        // Two separate functions: an async function's frame holds every value either path keeps
        // across a suspension, and the delegate path's setup would more than double the direct one's.
        if interceptor == nil, case .direct(let monitored) = environment.awaitedTaskRunner {
            return try await runDirectly(request, monitored: monitored, registered: registered)
        }
        return try await runOnDelegate(request, interceptor: interceptor, registered: registered)
    }

    /// ``runKeepingEngineHead(_:interceptor:registered:)`` on a ``TaskDelegate`` (an interceptor, or a
    /// manager with something only a delegate does).
    private func runOnDelegate(
        _ request: URLRequest, interceptor: (any RequestInterceptor)?, registered: (@Sendable (DataTask) -> Void)?
    ) async throws -> EngineHeadOutcome {
        let outcome = Mutex<Result<Data, any Error>?>(nil)
        let setup = TaskSetup(
            completion: { _, object, error in
                let result: Result<Data, any Error> = error.map { .failure($0) } ?? .success(object as? Data ?? Data())
                outcome.withLock { $0 = result }
            },
            keepsEngineHead: true)
        let task = await awaitDataTask(request, setup: setup, interceptor: interceptor, registered: registered)
        guard let result = outcome.withLock({ $0 }), let task else {
            throw CourierError.connectionLost(url: request.url, reason: "the task ended without a result")
        }
        let data = try result.get()
        let (head, url, metrics) = task.snapshot.withLock { ($0.head, $0.responseURL, $0.metrics) }
        guard let head, let url else {
            throw CourierError.connectionLost(url: request.url, reason: "no response")
        }
        return EngineHeadOutcome(data: data, head: head, url: url, metrics: metrics, task: task)
    }

    /// ``runKeepingEngineHead(_:interceptor:registered:)`` on a ``DirectTaskRunner``: the same task,
    /// notifications and result, without a ``TaskDelegate``.
    private func runDirectly(_ request: URLRequest, monitored: Bool, registered: (@Sendable (DataTask) -> Void)?) async throws -> EngineHeadOutcome {
        let (task, runner) = registerDirectTask(request, monitored: monitored)
        registered?(task)
        let ended = await runner.exchange()
        // As a data task's end: the raw body is the object (no serializer runs for a task that
        // keeps the engine head), and the response is made only for the monitors.
        runner.finish(
            response: monitored && ended.hasResponse ? task.response : nil, object: ended.error == nil ? ended.data : nil,
            error: ended.error, data: ended.data, serializer: nil)
        if let error = ended.error { throw error }
        // The final head, its URL and the metrics, read once from the task (see ``DirectTaskRunner/Ended``).
        let (head, url, metrics) = task.snapshot.withLock { ($0.head, $0.responseURL, $0.metrics) }
        guard let head, let url else {  // an end without an error had a response (DirectTaskRunner.end)
            throw CourierError.connectionLost(url: request.url, reason: "no response")
        }
        return EngineHeadOutcome(data: ended.data, head: head, url: url, metrics: metrics, task: task)
    }
}

extension URLSessionManager.EngineHeadOutcome {
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
