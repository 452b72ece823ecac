import CourierEngine
public import Dispatch
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import NIOCore
import NIOPosix
import NIOHTTP1
import Synchronization

/// AFNetworking's `AFURLSessionManager` on Courier's engine: creates and tracks data, upload
/// and download tasks, runs the response serializer for each, and reports through completion
/// blocks, manager-level hooks, notifications and event monitors.
///
/// ```swift
/// let manager = URLSessionManager()
/// let task = manager.dataTask(with: URLRequest(url: url)) { response, object, error in
///     print(response?.statusCode ?? 0, object ?? "nil", error ?? "no error")
/// }
/// task.resume()
/// ```
///
/// Thread-safe: configure it and create tasks from any thread. `@unchecked Sendable` because
/// it is subclassable (``HTTPSessionManager``); all mutable state is behind mutexes.
public class URLSessionManager: @unchecked Sendable {
    /// The configuration the manager was created with.
    public let configuration: SessionConfiguration
    /// Put in each task's ``SessionTask/taskDescription`` so that notifications can be filtered
    /// per manager (AFNetworking uses the manager's address; any unique tag serves).
    let managerTag = "courier.session-manager." + UUID().uuidString
    /// Digest nonce counts and challenges answered by ``credential``, across tasks.
    let digestAuthenticator: DigestAuthenticator
    /// The settings that may change (serializer, queues, credential, policy, blocks, monitors),
    /// shared with every task's environment.
    private let settings: SessionSettingsStore
    /// The tasks and the engine, shared with every task's environment.
    private let registry: TaskRegistry
    /// What each task runs with (see ``TaskEnvironment``): tasks reach the manager only through it.
    let environment: TaskEnvironment
    /// AFN's processing queue, for work off the event loop that belongs to no single task.
    /// (A task's own events, callbacks and serializer run on its ``TaskCallbackQueue``.)
    let processingQueue = DispatchQueue(label: "com.alamofire.networking.session.manager.processing", attributes: .concurrent)

    /// Runs Swift tasks on one of the event loops the session's connections live on; a
    /// connection opened for a request made from such a task is opened on that same loop, so
    /// awaiting requests there (`withTaskExecutorPreference(manager.taskExecutor) { … }`)
    /// spares the thread hand-offs between the cooperative pool and the event loop. It pays for
    /// callers that wait on one request at a time; many requests in flight are faster from the
    /// pool, where their serializer work spreads over the cores. Keep CPU-heavy work off it.
    /// See `EngineTaskExecutor`.
    public let taskExecutor: any TaskExecutor = EngineTaskExecutor(eventLoop: MultiThreadedEventLoopGroup.singleton.next())
    private static let sharedCompletionGroup = DispatchGroup()

    /// Creates a manager. The response serializer is JSON; completions run on a serial queue
    /// owned by the manager (a Linux process has no main run loop to drain `.main`).
    public init(configuration: SessionConfiguration = .default) {
        self.configuration = configuration
        let settings = SessionSettingsStore(
            SessionSettings(
                completionQueue: DispatchQueue(label: "courier.session-manager.completion"),
                completionGroup: Self.sharedCompletionGroup
            )
        )
        let registry = TaskRegistry(configuration: configuration, settings: settings)
        let digestAuthenticator = DigestAuthenticator()
        self.settings = settings
        self.registry = registry
        self.digestAuthenticator = digestAuthenticator
        self.environment = TaskEnvironment(
            configuration: configuration, settings: settings, digestAuthenticator: digestAuthenticator, registry: registry)
        // The engine now rather than on the first request: its setup (the TLS context, which
        // loads the system trust store, and the connection pool) stays out of the first
        // request's time. A TLS configuration that doesn't load fails the first task, as before.
        _ = try? registry.engine
    }

    // MARK: - Configuration

    /// Validates and parses responses for tasks created afterwards. Default
    /// ``JSONResponseSerializer``.
    public var responseSerializer: any ResponseSerializer {
        get { settings.withLock { $0.responseSerializer } }
        set { settings.withLock { $0.responseSerializer = newValue } }
    }

    /// Where completion blocks run. Default: a serial queue owned by the manager; set `.main`
    /// in an app.
    public var completionQueue: DispatchQueue {
        get { settings.withLock { $0.completionQueue } }
        set { settings.withLock { $0.completionQueue = newValue } }
    }

    /// The dispatch group completion blocks run in. Default: one process-wide group.
    public var completionGroup: DispatchGroup {
        get { settings.withLock { $0.completionGroup } }
        set { settings.withLock { $0.completionGroup = newValue } }
    }

    /// The credential answering Basic and Digest challenges by default (one attempt per task,
    /// plus one retry when a Digest nonce was stale). Default nil.
    ///
    /// It belongs to the origin (scheme, host, port) of each task's original request, and to
    /// the realm of the first challenge it answers there: a 401 from another origin (reached by
    /// a redirect) or another realm is not answered with it, and is the task's result unless
    /// the authentication challenge block answers it. The strongest scheme offered among
    /// ``credentialSchemes`` is used (Digest SHA-256, then Digest MD5, then Basic). After a
    /// Digest challenge with qop `auth` was answered, later requests to the same origin answer
    /// it ahead of time, counting `nc` up per nonce. Setting it forgets that Digest state.
    public var credential: URLCredential? {
        get { settings.withLock { $0.credential } }
        set {
            settings.withLock { $0.credential = newValue }
            digestAuthenticator.reset()
        }
    }

    /// The schemes ``credential`` may answer. Default ``AuthenticationSchemes/all``. Set
    /// ``AuthenticationSchemes/digest`` to never send the password itself: a server offering
    /// only Basic then gets no answer, and its 401 is the task's result.
    public var credentialSchemes: AuthenticationSchemes {
        get { settings.withLock { $0.credentialSchemes } }
        set { settings.withLock { $0.credentialSchemes = newValue } }
    }

    /// How TLS servers are judged: AFNetworking's `securityPolicy`. Default
    /// ``SecurityPolicy/default`` (the system trust store plus the configuration's extra roots,
    /// with a host-name check). Set it with ``setSecurityPolicy(_:)``.
    public var securityPolicy: SecurityPolicy {
        settings.withLock { $0.securityPolicy }
    }

    /// Sets ``securityPolicy``. It applies to connections made from now on: the manager starts
    /// a fresh connection pool, so no connection trusted under the old policy is reused
    /// (tasks already running finish on theirs).
    ///
    /// AFNetworking raises an "Invalid Security Policy" exception in some cases; Swift has no
    /// exceptions to raise, so this method throws instead (see
    /// ``HTTPSessionManager/setSecurityPolicy(_:)``). On a plain `URLSessionManager` it never
    /// throws.
    /// - Throws: ``CourierError/invalidSecurityPolicy(reason:)`` when the policy can't be used here.
    public func setSecurityPolicy(_ policy: SecurityPolicy) throws {
        try validate(policy)
        settings.withLock { $0.securityPolicy = policy }
        renewEngine()
    }

    /// Checks that `policy` can be used by this manager. Subclasses add their rules.
    func validate(_ policy: SecurityPolicy) throws {}

    /// Decides on TLS servers before the ``securityPolicy`` does: AFNetworking's task-level
    /// server-trust challenge handler. Answer ``ServerTrustDisposition/performDefaultHandling``
    /// to let the policy decide. Called once per new TLS connection, during the handshake.
    public func setServerTrustChallengeBlock(_ block: (@Sendable (ServerTrustChallenge) async -> ServerTrustDisposition)?) {
        settings.withLock { $0.serverTrustHandler = block }
        renewEngine()
    }

    /// Adds an event monitor; it receives every task's events from now on.
    public func addEventMonitor(_ monitor: any SessionEventMonitor) {
        let takesEvents = monitor.receivesTaskEvents
        settings.withLock { settings in
            settings.monitors.append(monitor)
            if takesEvents { settings.taskEventMonitors.append(monitor) }
        }
    }

    var hooks: SessionHooks { settings.withLock { $0.hooks } }
    var monitors: [any SessionEventMonitor] { settings.withLock { $0.monitors } }

    func updateHooks(_ update: (inout SessionHooks) -> Void) {
        settings.withLock { update(&$0.hooks) }
    }

    /// The engine, created on first use (and again after a reset); each manager has its own.
    /// Throws ``CourierError/invalidTLSConfiguration(reason:)`` when the configuration's TLS
    /// material (a trust root, the client identity) doesn't load: the task fails with it and
    /// nothing is sent, rather than going out without the verifier or identity.
    var engine: HTTPEngine {
        get throws(CourierError) { try registry.engine }
    }

    /// Makes the next task use a new engine (a fresh connection pool); the old one shuts down
    /// once the tasks running on it are done.
    private func renewEngine() {
        let (old, running): (HTTPEngine?, [SessionTask]) = registry.withLock { registry in
            defer { registry.engine = nil }
            return (registry.engine, Array(registry.tasks.values))
        }
        guard let old else { return }
        Task {
            await Self.completion(of: running)
            await old.shutdown()
        }
    }

    /// Returns once every task of `tasks` that was started has completed (tasks never resumed
    /// hold no connection and are not waited for).
    private static func completion(of tasks: [SessionTask]) async {
        for task in tasks where task.delegate?.hasStarted == true {
            while task.state != .completed { try? await Task.sleep(for: .milliseconds(5)) }
        }
    }

    // MARK: - Tasks

    /// All tasks not completed yet.
    public var tasks: [SessionTask] { registry.withLock { Array($0.tasks.values) }.sorted { $0.taskIdentifier < $1.taskIdentifier } }
    /// The data tasks among ``tasks``.
    public var dataTasks: [DataTask] { tasks.compactMap { $0 as? DataTask } }
    /// The upload tasks among ``tasks``.
    public var uploadTasks: [UploadTask] { tasks.compactMap { $0 as? UploadTask } }
    /// The download tasks among ``tasks``.
    public var downloadTasks: [DownloadTask] { tasks.compactMap { $0 as? DownloadTask } }

    /// The upload progress of a running task, or nil if it is unknown or finished.
    public func uploadProgress(for task: SessionTask) -> Progress? {
        registry.withLock { $0.tasks[task.taskIdentifier] }?.delegate?.uploadProgress
    }

    /// The download progress of a running task, or nil if it is unknown or finished.
    public func downloadProgress(for task: SessionTask) -> Progress? {
        registry.withLock { $0.tasks[task.taskIdentifier] }?.delegate?.downloadProgress
    }

    func register<T: SessionTask>(_ make: (Int) -> T, kind: TaskDelegate.Kind, body: RequestBody?, setup: TaskSetup) -> T {
        register(make) { [environment] task in
            TaskDelegate(kind: kind, task: task, body: body, environment: environment, setup: setup)
        }.task
    }

    /// Makes a task with the next identifier, puts it in the task list (unless the session was
    /// invalidated: then it fails when resumed) and gives it the driver `drive` makes for it.
    func register<T: SessionTask, Driver: TaskDriver>(_ make: (Int) -> T, driver drive: (T) -> Driver) -> (task: T, driver: Driver) {
        let (task, invalidated): (T, Bool) = registry.withLock { registry in
            registry.nextIdentifier += 1
            let task = make(registry.nextIdentifier)
            if !registry.invalidated { registry.tasks[task.taskIdentifier] = task }
            return (task, registry.invalidated)
        }
        task.taskDescription = managerTag
        let driver = drive(task)
        task.delegateBox.withLock { $0 = driver }
        if invalidated {
            // AFN: an invalidated session can't start tasks; the task fails when resumed.
            task.snapshot.withLock { $0.currentRequest = nil }
        }
        return (task, driver)
    }

    // MARK: - Invalidation

    /// Invalidates the session. With `cancelPendingTasks` every running task is cancelled;
    /// otherwise running tasks finish first. With `resetSession` the next task gets a fresh
    /// session (a new engine); without it, tasks created afterwards fail with
    /// ``CourierError/cancelled(url:)`` when resumed. Posts
    /// ``Foundation/NSNotification/Name/courierSessionDidInvalidate`` and calls the
    /// did-become-invalid block once the session is done.
    ///
    /// Returns at once; the work goes on in the background. To wait for it (a server shutting
    /// down, a test, a command-line tool about to exit), use
    /// ``invalidateSession(cancelingTasks:resetSession:)``.
    public func invalidateSessionCancelingTasks(_ cancelPendingTasks: Bool, resetSession: Bool) {
        _ = beginInvalidation(cancelingTasks: cancelPendingTasks, resetSession: resetSession)
    }

    /// The awaitable form of ``invalidateSessionCancelingTasks(_:resetSession:)``: the same
    /// invalidation, returning only when it is over.
    ///
    /// ```swift
    /// await manager.invalidateSession(cancelingTasks: false)  // let running requests finish
    /// ```
    ///
    /// When it returns:
    /// - every task that was running has completed and its completion block has run (with
    ///   `cancelingTasks`, most with ``CourierError/cancelled(url:)``); tasks created but never
    ///   resumed are not waited for (they hold no connection);
    /// - the engine has shut down: every connection it opened is closed (no socket of this
    ///   manager is left open). The engine runs on the process-wide
    ///   `MultiThreadedEventLoopGroup.singleton`, so there is no thread of its own to stop;
    /// - the did-become-invalid block, the
    ///   ``Foundation/NSNotification/Name/courierSessionDidInvalidate`` notification and the
    ///   monitors' ``SessionEventMonitor/sessionDidInvalidate(_:)`` have been delivered (on
    ///   the manager's processing queue, after the completion blocks still queued in
    ///   ``completionGroup``).
    ///
    /// Without `cancelingTasks` it waits as long as the running tasks take (a task that was
    /// resumed and then suspended is waited for until it is resumed and finishes). If the
    /// calling Swift task is cancelled, the running tasks are cancelled, and the call still
    /// returns only once all of the above is done. Calling it again, even at the same time, is
    /// harmless: each call waits for the same tasks and delivers the invalidation once more,
    /// as the synchronous form does. Never throws.
    ///
    /// - Parameters:
    ///   - cancelingTasks: Cancel the running tasks (`true`) or let them finish (`false`).
    ///   - resetSession: Keep the manager usable: the next task gets a fresh engine. Default
    ///     `false`: tasks created afterwards fail with ``CourierError/cancelled(url:)``.
    public func invalidateSession(cancelingTasks: Bool, resetSession: Bool = false) async {
        let (done, running) = beginInvalidation(cancelingTasks: cancelingTasks, resetSession: resetSession)
        await withTaskCancellationHandler {
            // An unstructured task: the caller's cancellation must not cut the wait short.
            await done.value
        } onCancel: {
            running.forEach { $0.cancel() }
        }
    }

    /// Marks the session invalid (or drops its engine when resetting), cancels the running
    /// tasks when asked, and starts the wait: for those tasks' completions, for the engine's
    /// shutdown, then for the invalidation to be delivered. Returns that work and the tasks.
    private func beginInvalidation(cancelingTasks: Bool, resetSession: Bool) -> (done: Task<Void, Never>, running: [SessionTask]) {
        let (running, engine): ([SessionTask], HTTPEngine?) = registry.withLock { registry in
            let engine = registry.engine
            if resetSession {
                registry.engine = nil
            } else {
                registry.invalidated = true
            }
            return (Array(registry.tasks.values), engine)
        }
        if cancelingTasks { running.forEach { $0.cancel() } }
        let group = completionGroup
        let done = Task {
            await self.deliveryOfCompletions(of: running)
            await engine?.shutdown()
            // The completion blocks still queued run first; the block, notification and
            // monitors then run on a dispatch queue, never on a thread of Swift's cooperative
            // pool (user code may block).
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                group.notify(queue: self.processingQueue) {
                    self.hooks.sessionDidBecomeInvalid?(self, nil)
                    NotificationCenter.default.post(name: .courierSessionDidInvalidate, object: self)
                    self.monitors.forEach { $0.sessionDidInvalidate(self) }
                    continuation.resume()
                }
            }
        }
        return (done, running)
    }

    /// Returns once no task of `tasks` that was started is still waiting for its completion to
    /// be delivered: each has completed and left the manager (which it does when its completion
    /// is handed to ``completionQueue``, inside ``completionGroup``, so a `notify` on the group
    /// afterwards runs after the completion block). Tasks never resumed are not waited for.
    private func deliveryOfCompletions(of tasks: [SessionTask]) async {
        for task in tasks {
            while isAwaitingDelivery(task) { try? await Task.sleep(for: .milliseconds(5)) }
        }
    }

    private func isAwaitingDelivery(_ task: SessionTask) -> Bool {
        guard registry.withLock({ $0.tasks[task.taskIdentifier] === task }) else { return false }
        return task.state == .completed || task.delegate?.hasStarted == true
    }
}
