import CourierEngine
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1

/// What a task runs with, captured from its manager when the task is registered: the
/// configuration (limits, cookie jar, extra headers, timeouts), the manager's live settings
/// (blocks, monitors, serializer, queues, credential: read when used, so a block set after the
/// task was made still applies, as before), the Digest state, and the task registry (the
/// engine, leaving the task list, a data task becoming a download task). ``TaskDelegate``
/// reaches its manager through this and nothing else; the manager itself is not held.
///
/// Made once per manager; each task holds a reference (one retain per task).
final class TaskEnvironment: Sendable {
    /// The manager's configuration.
    let configuration: SessionConfiguration
    /// The manager's settings, read when used.
    let settings: SessionSettingsStore
    /// Digest nonce counts and challenges answered by the session credential, across tasks.
    let digestAuthenticator: DigestAuthenticator
    /// The manager's tasks and engine.
    let registry: TaskRegistry
    /// Logs, metrics and spans (``SessionConfiguration/observability``), or nil when none is
    /// configured: then tasks make no ``TaskObservation``.
    let observer: SessionObserver?
    /// Where the event monitors hear the session's tasks while they run (``MonitorEventQueue``).
    let monitorQueue = MonitorEventQueue()

    init(configuration: SessionConfiguration, settings: SessionSettingsStore, digestAuthenticator: DigestAuthenticator, registry: TaskRegistry) {
        self.configuration = configuration
        self.settings = settings
        self.digestAuthenticator = digestAuthenticator
        self.registry = registry
        self.observer = SessionObserver(configuration.observability)
    }

    /// The engine: made on first use, and made again after a security-policy change (so it is
    /// asked for when a request is sent, not kept).
    /// - Throws: ``CourierError/invalidTLSConfiguration(reason:)``.
    var engine: HTTPEngine {
        get throws(CourierError) { try registry.engine }
    }

    // MARK: - Settings, read when used

    /// Every manager-level block (a copy: prefer ``hook(_:)`` for one).
    var hooks: SessionHooks { settings.withLock { $0.hooks } }
    /// One manager-level block, read without copying the others:
    /// `environment.hook { $0.dataTaskDidReceiveData }`.
    func hook<T>(_ read: (SessionHooks) -> T) -> T { settings.withLock { read($0.hooks) } }
    var monitors: [any SessionEventMonitor] { settings.withLock { $0.monitors } }
    var responseSerializer: any ResponseSerializer { settings.withLock { $0.responseSerializer } }
    var completionQueue: DispatchQueue { settings.withLock { $0.completionQueue } }
    var completionGroup: DispatchGroup { settings.withLock { $0.completionGroup } }
    /// The session credential (``URLSessionManager/credential``).
    var credential: URLCredential? { settings.withLock { $0.credential } }
    /// The schemes it may answer (``URLSessionManager/credentialSchemes``).
    var credentialSchemes: AuthenticationSchemes { settings.withLock { $0.credentialSchemes } }

    /// Where an awaited data task runs.
    enum AwaitedTaskRunner {
        /// On a ``TaskDelegate``.
        case delegate
        /// On a ``DirectTaskRunner``; `monitored`: event monitors are attached (none of them
        /// takes task events), so the runner tells them each hop's metrics.
        case direct(monitored: Bool)
    }

    /// Where an awaited data task runs: on ``DirectTaskRunner`` unless something is configured
    /// that the delegate's generality exists for (an interceptor, the HTTP cache, observability,
    /// an event monitor that takes task events, a block an exchange calls, the session
    /// credential). Read when such a task is made.
    var awaitedTaskRunner: AwaitedTaskRunner {
        guard configuration.cache == nil, observer == nil else { return .delegate }
        return settings.withLock { settings in
            guard settings.interceptor == nil, settings.taskEventMonitors.isEmpty, settings.credential == nil,
                !settings.hooks.watchExchanges
            else { return .delegate }
            return .direct(monitored: !settings.monitors.isEmpty)
        }
    }

    // MARK: - Cookies

    /// Stores the cookies a response sets (each `Set-Cookie` field on its own: their dates hold
    /// commas) in the configuration's jar, when it has one and the request handles cookies. The
    /// jar's rules decide what is kept; it does no I/O, so this is cheap on an event loop.
    func storeCookies(from headers: HTTPHeaders, for request: URLRequest, url: URL) {
        guard let jar = configuration.cookieJar, request.httpShouldHandleCookies else { return }
        let fields = headers["set-cookie"]
        guard !fields.isEmpty else { return }
        jar.storeCookies(fromSetCookieFields: fields, for: url)
    }

    // MARK: - Reporting (notifications, monitors, manager-level blocks)

    /// A lifecycle change a task reports: AFNetworking's resume or suspend notification, and
    /// the event monitors' call.
    enum LifecycleReport: Sendable {
        case resume
        case suspend
    }

    /// Enqueues `report` for `task` on its driver's `outbox`. Call it under the task's lock,
    /// with the transition, so reports queue in transition order. True: the caller has the turn
    /// and posts it with ``post(_:of:through:)`` once it holds no lock; false: the thread that
    /// has the turn posts it (the closure it needs is made only then).
    func enqueue(_ report: LifecycleReport, of task: SessionTask, on outbox: borrowing TaskNotificationOutbox) -> Bool {
        outbox.enqueue { { [self] in self.post(report, of: task) } }
    }

    /// Posts `report`, then whatever others enqueued meanwhile, in order: for the caller
    /// ``enqueue(_:of:on:)`` gave the turn, holding no lock (observers may call the task back).
    func post(_ report: LifecycleReport, of task: SessionTask, through outbox: borrowing TaskNotificationOutbox) {
        outbox.drain { post(report, of: task) }
    }

    private func post(_ report: LifecycleReport, of task: SessionTask) {
        switch report {
        case .resume:
            NotificationCenter.default.post(name: .courierTaskDidResume, object: task)
            monitors.forEach { $0.taskDidResume(task) }
        case .suspend:
            NotificationCenter.default.post(name: .courierTaskDidSuspend, object: task)
            monitors.forEach { $0.taskDidSuspend(task) }
        }
    }

    /// Ends a task's reporting: releases its driver, calls the manager's completion block, then
    /// posts AFNetworking's completion notification and tells the monitors through the task's
    /// `outbox`: after any resume or suspension posted before it (maybe by the thread that is
    /// posting one right now, which then posts this too, once this returned). `serializer` is
    /// the one the notification names; nil: the manager's, read with the block and the monitors
    /// (one read of the settings every task shares, not two).
    func taskCompleted(
        _ task: SessionTask, response: HTTPURLResponse?, data: Data?, object: (any Sendable)?, error: (any Error)?,
        serializer: (any ResponseSerializer)?, assetURL: URL?, outbox: borrowing TaskNotificationOutbox
    ) {
        task.delegateBox.withLock { $0 = nil }
        let (didComplete, monitors, serializer) = settings.withLock {
            ($0.hooks.taskDidComplete, $0.monitors, serializer ?? $0.responseSerializer)
        }
        didComplete?(task, error)
        let report = CompletionReport(
            task: task, response: response, data: task is DownloadTask ? nil : data, object: object, error: error,
            serializer: serializer, assetURL: assetURL, monitors: monitors)
        if outbox.enqueue({ { report.post() } }) { outbox.drain { report.post() } }
    }

    /// A task's completion notification and monitor calls, as one post for its outbox.
    private struct CompletionReport: Sendable {
        let task: SessionTask
        let response: HTTPURLResponse?
        let data: Data?
        let object: (any Sendable)?
        let error: (any Error)?
        let serializer: any ResponseSerializer
        let assetURL: URL?
        let monitors: [any SessionEventMonitor]

        func post() {
            let userInfo = CompletionUserInfo.make(
                serializer: serializer, data: data, assetURL: assetURL, object: object, error: error, metrics: task.metrics)
            NotificationCenter.default.post(name: .courierTaskDidComplete, object: task, userInfo: userInfo)
            monitors.forEach { $0.taskDidComplete(task, response: response, responseObject: object, error: error) }
        }
    }

    func downloadMoved(_ task: DownloadTask, to url: URL) {
        NotificationCenter.default.post(name: .courierDownloadTaskDidMoveFileSuccessfully, object: task)
        monitors.forEach { $0.downloadTask(task, didMoveFileTo: url) }
    }

    func downloadMoveFailed(_ task: DownloadTask, error: CourierError) {
        NotificationCenter.default.post(
            name: .courierDownloadTaskDidFailToMoveFile, object: task, userInfo: [SessionNotificationKey.error: error])
        monitors.forEach { $0.downloadTask(task, didFailToMoveFileWith: error) }
    }
}
