import CourierEngine
import Synchronization

/// A manager's tasks and its engine, behind one lock: the task list AFNetworking's `tasks`
/// reads, the identifiers, whether the session was invalidated, and the engine (made on first
/// use, dropped by a reset or a security-policy change so the next task makes a new one).
/// Shared by the manager and each task's ``TaskEnvironment``.
final class TaskRegistry: Sendable {
    struct State {
        var tasks: [Int: SessionTask] = [:]
        var nextIdentifier = 0
        var engine: HTTPEngine?
        var invalidated = false
    }

    private let mutex = Mutex(State())
    private let configuration: SessionConfiguration
    private let settings: SessionSettingsStore

    init(configuration: SessionConfiguration, settings: SessionSettingsStore) {
        self.configuration = configuration
        self.settings = settings
    }

    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }

    /// The engine, created on first use (and again after a reset); each manager has its own.
    /// Throws ``CourierError/invalidTLSConfiguration(reason:)`` when the configuration's TLS
    /// material (a trust root, the client identity) doesn't load: the task fails with it and
    /// nothing is sent, rather than going out without the verifier or identity.
    var engine: HTTPEngine {
        get throws(CourierError) {
            try mutex.withLock { state throws(CourierError) -> HTTPEngine in
                if let engine = state.engine { return engine }
                let settings = self.settings
                let verifier = SessionTrustVerifier(
                    tls: configuration.tls,
                    policy: { settings.withLock { $0.securityPolicy } },
                    handler: { settings.withLock { $0.serverTrustHandler } }
                )
                let engine: HTTPEngine
                do {
                    engine = try HTTPEngine(configuration: configuration.engineConfiguration(verifier: verifier))
                } catch {
                    throw SessionBridge.configurationError(error)
                }
                state.engine = engine
                return engine
            }
        }
    }

    /// Takes `task` out of the task list (as in AFNetworking, before its completion runs).
    func unregister(_ task: SessionTask) {
        mutex.withLock { _ = $0.tasks.removeValue(forKey: task.taskIdentifier) }
    }

    /// Registers a download task that takes `dataTask`'s place (sharing its state), run by
    /// `delegate`; `dataTask` leaves the task list.
    func replace(_ dataTask: DataTask, withDownloadTaskRunBy delegate: TaskDelegate) -> DownloadTask {
        let downloadTask: DownloadTask = mutex.withLock { state in
            state.nextIdentifier += 1
            let task = DownloadTask(taskIdentifier: state.nextIdentifier, sharingStateWith: dataTask)
            state.tasks.removeValue(forKey: dataTask.taskIdentifier)
            if !state.invalidated { state.tasks[task.taskIdentifier] = task }
            return task
        }
        downloadTask.delegateBox.withLock { $0 = delegate }
        return downloadTask
    }
}
