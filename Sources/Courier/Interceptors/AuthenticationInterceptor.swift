#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import Synchronization

/// Bearer-token authentication with refresh: every request goes out with
/// `Authorization: Bearer <token>`; a 401 to a request that carried the current token makes
/// the interceptor call `refresh` with that (rejected) token, and the request is sent again
/// with the new one. Any number of concurrent 401s cause one refresh: the others wait for it.
/// Each task is replayed for a 401 at most once (a new token rejected again is delivered).
/// Requests adapted while a refresh runs wait for it and go out with its token.
///
/// Thread-safe. A refresh that throws fails the waiting tasks with its error (and requests
/// adapted while it ran); the next 401 tries again.
public final class AuthenticationInterceptor: RequestInterceptor {
    private struct State {
        var token: String
        var refreshing: Task<String, any Error>?
        /// The tasks already replayed for a 401, weakly (pruned when one is added).
        var replayed: [ObjectIdentifier: WeakTask] = [:]
    }

    private struct WeakTask {
        weak var task: SessionTask?
    }

    private let state: Mutex<State>
    private let refresh: @Sendable (_ rejectedToken: String) async throws -> String

    /// An interceptor that sends `token` until a 401 makes it call `refresh` for a new one.
    public init(token: String, refresh: @escaping @Sendable (_ rejectedToken: String) async throws -> String) {
        self.state = Mutex(State(token: token))
        self.refresh = refresh
    }

    /// The token requests are sent with now.
    public var token: String { state.withLock { $0.token } }

    /// Sets `Authorization: Bearer <token>` (waiting first for a refresh in progress).
    /// - Throws: the error of a refresh in progress that failed.
    public func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
        let (token, refreshing) = state.withLock { ($0.token, $0.refreshing) }
        let current = try await refreshing?.value ?? token
        var request = request
        request.setValue("Bearer \(current)", forHTTPHeaderField: "Authorization")
        return request
    }

    /// For a 401: ``RetryDecision/retry`` once per task, after one shared refresh if the
    /// request carried the current token (no refresh when another 401 already replaced it).
    /// Anything else: ``RetryDecision/doNotRetry``.
    public func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision {
        guard response?.statusCode == 401 else { return .doNotRetry }
        let sent = Self.bearerToken(in: task.currentRequest)
        let refreshing: Task<String, any Error>?? = state.withLock { state in
            let key = ObjectIdentifier(task)
            if let seen = state.replayed[key], seen.task === task { return .none }
            state.replayed = state.replayed.filter { $0.value.task != nil }
            state.replayed[key] = WeakTask(task: task)
            if let running = state.refreshing { return .some(running) }
            guard sent == nil || sent == state.token else { return .some(nil) }  // already refreshed
            let rejected = state.token
            let refresh = self.refresh
            let running = Task<String, any Error> { [weak self] in
                do {
                    let fresh = try await refresh(rejected)
                    self?.finishRefresh(token: fresh)
                    return fresh
                } catch {
                    self?.finishRefresh(token: nil)
                    throw error
                }
            }
            state.refreshing = running
            return .some(running)
        }
        guard let refreshing else { return .doNotRetry }  // this task was replayed once already
        guard let running = refreshing else { return .retry }
        do {
            _ = try await running.value
            return .retry
        } catch {
            return .doNotRetryWithError(error)
        }
    }

    private func finishRefresh(token: String?) {
        state.withLock { state in
            if let token { state.token = token }
            state.refreshing = nil
        }
    }

    /// The token of a `Bearer` `Authorization` header, if any.
    static func bearerToken(in request: URLRequest?) -> String? {
        guard let value = request?.value(forHTTPHeaderField: "Authorization") else { return nil }
        let prefix = "bearer "
        guard value.lowercased().hasPrefix(prefix) else { return nil }
        return String(value.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
    }
}
