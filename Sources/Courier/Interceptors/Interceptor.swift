#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// Several interceptors as one: each adapts the request in turn (the first's output is the
/// second's input; the first throw fails the task), and for a retry they are asked in order
/// until one decides something other than ``RetryDecision/doNotRetry``.
public struct Interceptor: RequestInterceptor {
    /// The interceptors, in the order they run.
    public let interceptors: [any RequestInterceptor]

    /// Chains `interceptors` (an empty list adapts nothing and never retries).
    public init(_ interceptors: [any RequestInterceptor]) {
        self.interceptors = interceptors
    }

    /// Runs every interceptor's adapt in order.
    /// - Throws: the first error an interceptor throws.
    public func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        var request = request
        for interceptor in interceptors {
            request = try await interceptor.adapt(request, for: task)
        }
        return request
    }

    /// The first decision other than ``RetryDecision/doNotRetry``, else `.doNotRetry`.
    public func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision {
        for interceptor in interceptors {
            let decision = await interceptor.retry(task, dueTo: error, response: response)
            if case .doNotRetry = decision { continue }
            return decision
        }
        return .doNotRetry
    }
}
