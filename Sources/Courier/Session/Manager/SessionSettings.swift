import CourierEngine
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A manager's settings that may change while it runs (the serializer, the completion queue
/// and group, the credential, the TLS policy, the blocks and the monitors): one value behind
/// one lock, shared by the manager (which sets them) and each task's ``TaskEnvironment``
/// (which reads them when it uses them, so a block set after a task was made still applies
/// to it, as in AFNetworking).
struct SessionSettings {
    var responseSerializer: any ResponseSerializer = JSONResponseSerializer()
    var completionQueue: DispatchQueue
    var completionGroup: DispatchGroup
    var credential: URLCredential?
    var credentialSchemes = AuthenticationSchemes.all
    var securityPolicy = SecurityPolicy.default
    var serverTrustHandler: (@Sendable (ServerTrustChallenge) async -> ServerTrustDisposition)?
    var hooks = SessionHooks()
    var monitors: [any SessionEventMonitor] = []
    /// The `monitors` that take task events (``SessionEventMonitor/receivesTaskEvents``), in order.
    var taskEventMonitors: [any SessionEventMonitor] = []
    /// ``URLSessionManager/interceptor``.
    var interceptor: (any RequestInterceptor)?
}

/// The lock around a manager's ``SessionSettings``.
final class SessionSettingsStore: Sendable {
    private let mutex: Mutex<SessionSettings>

    init(_ settings: SessionSettings) {
        mutex = Mutex(settings)
    }

    func withLock<R>(_ body: (inout SessionSettings) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }
}
