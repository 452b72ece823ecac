public import CourierEngine
public import Dispatch
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import NIOCore
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
    private struct Settings {
        var responseSerializer: any ResponseSerializer = JSONResponseSerializer()
        var completionQueue: DispatchQueue
        var completionGroup: DispatchGroup
        var credential: URLCredential?
        var credentialSchemes = AuthenticationSchemes.all
        var securityPolicy = SecurityPolicy.default
        var serverTrustHandler: (@Sendable (ServerTrustChallenge) async -> ServerTrustDisposition)?
        var hooks = SessionHooks()
        var monitors: [any SessionEventMonitor] = []
    }

    private struct Registry {
        var tasks: [Int: SessionTask] = [:]
        var nextIdentifier = 0
        var engine: HTTPEngine?
        var invalidated = false
    }

    /// The configuration the manager was created with.
    public let configuration: SessionConfiguration
    /// Put in each task's ``SessionTask/taskDescription`` so that notifications can be filtered
    /// per manager (AFNetworking uses the manager's address; any unique tag serves).
    let managerTag = "courier.session-manager." + UUID().uuidString
    /// Digest nonce counts and challenges answered by ``credential``, across tasks.
    let digestAuthenticator = DigestAuthenticator()
    private let settings: Mutex<Settings>
    private let registry = Mutex(Registry())
    /// AFN's processing queue, for work off the event loop that belongs to no single task.
    /// (A task's own events, callbacks and serializer run on its ``TaskCallbackQueue``.)
    let processingQueue = DispatchQueue(label: "com.alamofire.networking.session.manager.processing", attributes: .concurrent)
    private static let sharedCompletionGroup = DispatchGroup()

    /// Creates a manager. The response serializer is JSON; completions run on a serial queue
    /// owned by the manager (a Linux process has no main run loop to drain `.main`).
    public init(configuration: SessionConfiguration = .default) {
        self.configuration = configuration
        self.settings = Mutex(
            Settings(
                completionQueue: DispatchQueue(label: "courier.session-manager.completion"),
                completionGroup: Self.sharedCompletionGroup
            )
        )
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
        settings.withLock { $0.monitors.append(monitor) }
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
        get throws(CourierError) {
            try registry.withLock { registry throws(CourierError) -> HTTPEngine in
                if let engine = registry.engine { return engine }
                let verifier = SessionTrustVerifier(
                    tls: configuration.tls,
                    policy: { [weak self] in self?.securityPolicy ?? .default },
                    handler: { [weak self] in self?.settings.withLock { $0.serverTrustHandler } }
                )
                let engine: HTTPEngine
                do {
                    engine = try HTTPEngine(configuration: configuration.engineConfiguration(verifier: verifier))
                } catch {
                    throw Self.configurationError(error)
                }
                registry.engine = engine
                return engine
            }
        }
    }

    /// The session error for an engine that could not be made from the configuration.
    private static func configurationError(_ error: any Error) -> CourierError {
        let prefix = "invalid TLS configuration: "
        if case .tlsHandshakeFailed(let reason) = error as? EngineError {
            return .invalidTLSConfiguration(reason: reason.hasPrefix(prefix) ? String(reason.dropFirst(prefix.count)) : reason)
        }
        return .invalidTLSConfiguration(reason: "\(error)")
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
        let (task, invalidated): (T, Bool) = registry.withLock { registry in
            registry.nextIdentifier += 1
            let task = make(registry.nextIdentifier)
            if !registry.invalidated { registry.tasks[task.taskIdentifier] = task }
            return (task, registry.invalidated)
        }
        task.taskDescription = managerTag
        let delegate = TaskDelegate(kind: kind, task: task, body: body, core: self, setup: setup)
        task.delegateBox.withLock { $0 = delegate }
        if invalidated {
            // AFN: an invalidated session can't start tasks; the task fails when resumed.
            task.snapshot.withLock { $0.currentRequest = nil }
        }
        return task
    }

    /// A task that sends `request` (with its `httpBody`, if any) and gathers the response body
    /// in memory. Not resumed. `completionHandler` gets the response, the serializer's object
    /// and the error; both object and error may be set (AFN's status-failure case).
    @discardableResult
    public func dataTask(
        with request: URLRequest,
        uploadProgress: (@Sendable (Progress) -> Void)? = nil,
        downloadProgress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> DataTask {
        register(
            { DataTask(taskIdentifier: $0, request: request) }, kind: .data,
            body: Self.body(of: request),
            setup: TaskSetup(uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: completionHandler))
    }

    /// A task that uploads the file at `fileURL` as the body, streamed from disk. Not resumed.
    @discardableResult
    public func uploadTask(
        with request: URLRequest,
        fromFile fileURL: URL,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> UploadTask {
        register(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload,
            body: .file(path: fileURL.path), setup: TaskSetup(uploadProgress: progress, completion: completionHandler))
    }

    /// A task that uploads `bodyData`. Not resumed.
    @discardableResult
    public func uploadTask(
        with request: URLRequest,
        from bodyData: Data,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> UploadTask {
        register(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload,
            body: .data(bodyData), setup: TaskSetup(uploadProgress: progress, completion: completionHandler))
    }

    /// A task whose body comes from a stream: `body` (an engine ``CourierEngine/RequestBody``,
    /// e.g. `.stream(length:)` or `.sequence(_:length:)`), or when nil the request's
    /// `httpBodyStream`. Without a known length the body is sent chunked. Not resumed.
    @discardableResult
    public func uploadTask(
        withStreamedRequest request: URLRequest,
        body: RequestBody? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)? = nil
    ) -> UploadTask {
        uploadTask(withStreamedRequest: request, body: body, bodyFactory: nil, progress: progress, completionHandler: completionHandler)
    }

    /// The streamed upload, with a factory that makes the body again when a redirect (307,
    /// 308) or an authentication retry must resend it.
    func uploadTask(
        withStreamedRequest request: URLRequest,
        body: RequestBody?,
        bodyFactory: (@Sendable () -> RequestBody?)?,
        progress: (@Sendable (Progress) -> Void)?,
        completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)?
    ) -> UploadTask {
        let streamed = body ?? Self.body(of: request)
        return register(
            { UploadTask(taskIdentifier: $0, request: request) }, kind: .upload,
            body: streamed,
            setup: TaskSetup(uploadProgress: progress, completion: completionHandler, bodyFactory: bodyFactory))
    }

    /// A task that streams the response body to a temporary file, then moves it to
    /// `destination(temporaryURL, response)`. The completion's URL is where the file ended up.
    /// A failed move posts ``Foundation/Notification/Name/courierDownloadTaskDidFailToMoveFile``
    /// and is not reported as the task's error (as in AFNetworking). Not resumed.
    @discardableResult
    public func downloadTask(
        with request: URLRequest,
        progress: (@Sendable (Progress) -> Void)? = nil,
        destination: (@Sendable (URL, HTTPURLResponse) -> URL)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void)? = nil
    ) -> DownloadTask {
        register(
            { DownloadTask(taskIdentifier: $0, request: request) }, kind: .download(destination: destination),
            body: Self.body(of: request),
            setup: TaskSetup(downloadProgress: progress, completion: Self.fileURLCompletion(completionHandler)))
    }

    /// A task that continues a download from `resumeData`: it asks for the bytes after the
    /// partial file's end (`Range`, plus `If-Range` with the validator), appends them on a 206
    /// that starts exactly there, starts the file over (truncated, from byte 0) on 200, and
    /// finishes at once on 416 when the file is already whole. Resume data without a validator
    /// starts over from byte 0 unless its `allowsResumeWithoutValidator` is set. A 206 that
    /// starts elsewhere, has a malformed `Content-Range` or another complete length fails with
    /// ``CourierError/invalidResumeResponse(url:reason:)``; a partial file that is not a regular
    /// file (a directory, a symbolic link, a device) fails with
    /// ``CourierError/cannotWriteDownloadFile(path:reason:)``; neither touches the file. The
    /// did-resume block and the progress start from the offset. Then, as any download, the
    /// file moves to `destination` (returning the partial file's own URL keeps it in place).
    /// Not resumed.
    @discardableResult
    public func downloadTask(
        withResumeData resumeData: DownloadResumeData,
        progress: (@Sendable (Progress) -> Void)? = nil,
        destination: (@Sendable (URL, HTTPURLResponse) -> URL)? = nil,
        completionHandler: (@Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void)? = nil
    ) -> DownloadTask {
        let request = resumeData.rangeRequest(offset: resumeData.resumeOffset)
        return register(
            { DownloadTask(taskIdentifier: $0, request: request) }, kind: .download(destination: destination),
            body: Self.body(of: request),
            setup: TaskSetup(
                downloadProgress: progress, completion: Self.fileURLCompletion(completionHandler), resumeData: resumeData))
    }

    /// A download's completion in the general shape: the response object is the file's URL.
    private static func fileURLCompletion(
        _ handler: (@Sendable (HTTPURLResponse?, URL?, (any Error)?) -> Void)?
    ) -> TaskSetup.Completion? {
        guard let handler else { return nil }
        return { response, object, error in handler(response, object as? URL, error) }
    }

    /// Registers a download task that takes `dataTask`'s place (sharing its state), run by
    /// `delegate`; `dataTask` leaves the task list.
    func replace(_ dataTask: DataTask, withDownloadTaskRunBy delegate: TaskDelegate) -> DownloadTask {
        let downloadTask: DownloadTask = registry.withLock { registry in
            registry.nextIdentifier += 1
            let task = DownloadTask(taskIdentifier: registry.nextIdentifier, sharingStateWith: dataTask)
            registry.tasks.removeValue(forKey: dataTask.taskIdentifier)
            if !registry.invalidated { registry.tasks[task.taskIdentifier] = task }
            return task
        }
        downloadTask.delegateBox.withLock { $0 = delegate }
        return downloadTask
    }

    static func body(of request: URLRequest) -> RequestBody? {
        if let data = request.httpBody { return .data(data) }
        if let stream = request.httpBodyStream {
            let length = request.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init)
            return InputStreamBody.make(stream, length: length)
        }
        return nil
    }

    // MARK: - Invalidation

    /// Invalidates the session. With `cancelPendingTasks` every running task is cancelled;
    /// otherwise running tasks finish first. With `resetSession` the next task gets a fresh
    /// session (a new engine); without it, tasks created afterwards fail with
    /// ``CourierError/cancelled(url:)`` when resumed. Posts
    /// ``Foundation/Notification/Name/courierSessionDidInvalidate`` and calls the
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
    ///   ``Foundation/Notification/Name/courierSessionDidInvalidate`` notification and the
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

    // MARK: - Reporting (used by TaskDelegate)

    func unregister(_ task: SessionTask) {
        registry.withLock { _ = $0.tasks.removeValue(forKey: task.taskIdentifier) }
    }

    func taskDidResume(_ task: SessionTask) {
        NotificationCenter.default.post(name: .courierTaskDidResume, object: task)
        monitors.forEach { $0.taskDidResume(task) }
    }

    func taskDidSuspend(_ task: SessionTask) {
        NotificationCenter.default.post(name: .courierTaskDidSuspend, object: task)
        monitors.forEach { $0.taskDidSuspend(task) }
    }

    func taskCompleted(
        _ task: SessionTask, response: HTTPURLResponse?, data: Data?, object: (any Sendable)?, error: (any Error)?,
        serializer: any ResponseSerializer, assetURL: URL?
    ) {
        task.delegateBox.withLock { $0 = nil }
        hooks.taskDidComplete?(task, error)
        var userInfo: [String: Any] = [SessionNotificationKey.responseSerializer: serializer]
        if let data, !(task is DownloadTask) { userInfo[SessionNotificationKey.responseData] = data }
        if let assetURL { userInfo[SessionNotificationKey.assetPath] = assetURL }
        if let object { userInfo[SessionNotificationKey.serializedResponse] = object }
        if let error { userInfo[SessionNotificationKey.error] = error }
        if let metrics = task.metrics { userInfo[SessionNotificationKey.metrics] = metrics }
        NotificationCenter.default.post(name: .courierTaskDidComplete, object: task, userInfo: userInfo)
        monitors.forEach { $0.taskDidComplete(task, response: response, responseObject: object, error: error) }
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

    // MARK: - Engine glue

    func engineRequest(for request: URLRequest, body: RequestBody?) throws -> EngineRequest {
        guard let url = request.url else {
            throw CourierError.requestSerializationFailed(.invalidURL(""))
        }
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            headers.add(name: name, value: value)
        }
        for (name, value) in configuration.httpAdditionalHeaders where !headers.contains(name: name) {
            headers.add(name: name, value: value)
        }
        if let jar = configuration.cookieJar, request.httpShouldHandleCookies, !headers.contains(name: "cookie"),
            let cookie = jar.cookieHeader(for: url)
        {
            headers.add(name: "Cookie", value: cookie)
        }
        // `URLRequest.timeoutInterval` defaults to 60 s, so a request that kept the default
        // follows the configuration's `timeoutIntervalForRequest`; any other value wins.
        let requested = request.timeoutInterval
        let idle = requested > 0 && requested != Self.urlRequestDefaultTimeout ? requested : configuration.timeoutIntervalForRequest
        return EngineRequest(
            method: request.httpMethod ?? "GET",
            url: url,
            headers: headers,
            body: body,
            idleTimeout: .nanoseconds(Int64(idle * 1_000_000_000)),
            deadline: NIODeadline.now()
                + TimeAmount.nanoseconds(Int64(min(configuration.timeoutIntervalForResource, 1e9) * 1_000_000_000))
        )
    }

    private static let urlRequestDefaultTimeout: TimeInterval = 60

    /// Stores the cookies a response sets (each `Set-Cookie` field on its own: their dates hold
    /// commas) in the configuration's jar, when it has one and the request handles cookies. The
    /// jar's rules decide what is kept; it does no I/O, so this is cheap on an event loop.
    func storeCookies(from headers: HTTPHeaders, for request: URLRequest, url: URL) {
        guard let jar = configuration.cookieJar, request.httpShouldHandleCookies else { return }
        let fields = headers["set-cookie"]
        guard !fields.isEmpty else { return }
        jar.storeCookies(fromSetCookieFields: fields, for: url)
    }

    func courierError(_ error: EngineError, url: URL?) -> CourierError {
        CourierError(error, url: url)
    }
}
