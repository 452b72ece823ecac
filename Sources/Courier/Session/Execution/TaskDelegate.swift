import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import Synchronization

/// Runs one task: AFNetworking's `AFURLSessionManagerTaskDelegate` together with the part of
/// NSURLSession that drives a task. It sends the request through the engine, follows
/// redirects and answers authentication challenges, gathers the data (or writes the download
/// file), owns the two `Progress` objects, runs the response serializer off the event loop,
/// and calls the completion exactly once on the manager's completion queue.
final class TaskDelegate: TaskDriver {
    enum Kind: Sendable {
        case data
        case upload
        case download(destination: (@Sendable (URL, HTTPURLResponse) -> URL)?)
        /// ``URLSessionManager/bytes(for:body:)``: the final head and the body go to the stream.
        case stream(ResponseBodyStream)
    }

    /// What the state machine runs beside: the objects the executor acts on. One lock holds
    /// them and the machine together, so a decision and the objects it is about never drift.
    struct Run {
        var machine: TaskStateMachine
        var engineTask: EngineTask?
        var data = Data()
        var download: DownloadSink?
        /// The body sent with the next request (replaced when a redirect needs a fresh stream).
        var body: RequestBody?
        var authentication = AuthenticationAttempts()
        /// The last `Authorization` the session put on a request answering a challenge, and the
        /// origin it answers: a retry adapted to another origin must not carry it.
        var answeredAuthorization: (value: String, origin: CredentialScope.Origin)?
        /// The origin the interceptor last adapted a request for (nil before the first adapt,
        /// or for a URL without one): a retry a redirect took elsewhere is the server's choice.
        var adaptedOrigin: CredentialScope.Origin?
        /// Set by `cancel(producingResumeData:)`.
        var resumeDataHandler: (@Sendable (DownloadResumeData?) -> Void)?
        /// The task's one deadline, fixed when it starts; every hop it sends shares it.
        var deadline: TaskDeadline?
        /// The HTTP cache's part in the current hop, if any: it may be sending a stored body,
        /// so pauses and cancellation reach it as they reach the engine task.
        var cachedExchange: CachedExchange?
        /// The event monitors the task's ``TaskEvent``s go to, read when it starts (empty:
        /// no event is built), the current exchange's timeline, and its hop number.
        var events = TaskEventState()
        /// The interceptor's retry decision under way (and the delay after it): cancelled with
        /// the task, so a decision that waits (``ConnectivityRetrier``) ends at once.
        var retryDecision: Task<Void, Never>?
    }

    let kind: Kind
    /// The task this delegate runs as created.
    private let originalTask: SessionTask
    /// The download task that took a data task's place (set once, read without a lock).
    let becameTask = AtomicLazyReference<DownloadTask>()
    /// The task this delegate runs; replaced once when a data task becomes a download task.
    var task: SessionTask { becameTask.load() ?? originalTask }
    /// The state behind the task (shared by both faces of a data task that became a download).
    let snapshot: SessionTask.SharedSnapshot
    /// See ``TaskSetup/finisher``: one thread hop instead of three for the async shape.
    let finisher: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    /// The download this task resumes, if any.
    let resumeData: DownloadResumeData?
    /// See ``TaskSetup/bodyFactory``.
    private let bodyFactory: (@Sendable () -> RequestBody?)?
    /// Totals, `Progress` objects, progress blocks and streams, for both directions.
    let progress: TaskProgress
    let completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)?
    /// See ``TaskSetup/completionReadsResponse``.
    let completionReadsResponse: Bool
    /// What the task runs with, captured from its manager at registration.
    let environment: TaskEnvironment
    /// The task's one lock: the state machine and what it acts on.
    let run: Mutex<Run>
    /// Posts the task's resumes, suspensions and completion in the order of their transitions.
    let outbox = TaskNotificationOutbox()
    /// Where this task's engine events are handled and so where its callbacks run: off the
    /// event loop, in order (see ``TaskCallbackQueue``).
    let callbacks: TaskCallbackQueue
    /// A serializer for this task only (the async typed API), instead of the manager's.
    let serializerOverride: (any ResponseSerializer)?
    /// See ``TaskSetup/keepsEngineHead``.
    let keepsEngineHead: Bool
    /// Whether this task's engine events may be handled on the event loop that delivers them
    /// (see ``eventsRunInline()``): the async shape (``TaskSetup/finisher``) of a data or upload
    /// task without progress blocks. Saves a thread hop per request.
    private let mayHandleEventsInline: Bool
    /// Whether the task reports ``TaskEvent``s (set once, when it starts with a monitor that
    /// takes them): read without the task's lock on the per-chunk path.
    let eventsOn = Atomic<Bool>(false)
    /// Whether the manager had event monitors when the task started (set once, then).
    let monitored = Atomic<Bool>(false)
    /// Whether this task made a monitor call through its callback queue
    /// (``TaskCallbackQueue/tellMonitors(_:canWait:)``): its end then makes those still waiting first.
    let toldMonitors = Atomic<Bool>(false)
    /// Logs, metrics and spans of this task, or nil (no observability configured: nothing is
    /// paid). See ``TaskObservation``.
    let observation: TaskObservation?

    init(kind: Kind, task: SessionTask, body: RequestBody?, environment: TaskEnvironment, setup: TaskSetup) {
        self.finisher = setup.finisher
        self.serializerOverride = setup.serializer
        self.keepsEngineHead = setup.keepsEngineHead
        switch kind {
        case .data, .upload:
            self.mayHandleEventsInline = setup.finisher != nil && setup.uploadProgress == nil && setup.downloadProgress == nil
        case .download, .stream:
            self.mayHandleEventsInline = false
        }
        self.kind = kind
        self.originalTask = task
        self.snapshot = task.snapshot
        self.resumeData = setup.resumeData
        self.bodyFactory = setup.bodyFactory
        let destination: TaskStateMachine.BodyDestination
        switch kind {
        case .download: destination = .file
        case .stream: destination = .stream
        case .data, .upload: destination = .memory
        }
        let machine = TaskStateMachine(
            destination: destination, maximumRedirects: environment.configuration.maximumRedirects,
            maximumBodySize: environment.configuration.maximumResponseBodySize)
        self.run = Mutex(Run(machine: machine, body: body))
        self.environment = environment
        self.callbacks = TaskCallbackQueue(label: "courier.task-callbacks", monitorQueue: environment.monitorQueue)
        self.observation = environment.observer.map { TaskObservation(observer: $0) }
        self.completionHandler = setup.completion
        self.completionReadsResponse = setup.completionReadsResponse
        let bodyLength = body?.expectedLength
        if let bodyLength { task.snapshot.withLock { $0.countOfBytesExpectedToSend = bodyLength } }
        // AFN: an unknown upload size falls back to the request's Content-Length.
        let uploadTotal = bodyLength ?? task.originalRequest?.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) } ?? -1
        self.progress = TaskProgress(
            uploadTotal: uploadTotal, uploadHandler: setup.uploadProgress, downloadHandler: setup.downloadProgress)
    }

    // MARK: - Control

    /// Whether the task was ever resumed (it may be on an engine's connection).
    var hasStarted: Bool { run.withLock { $0.machine.started } }

    /// The public state follows the machine's, written under the task's lock (the machine's
    /// lock is always taken first).
    private func publish(_ lifecycle: SessionTask.State) {
        snapshot.withLock { $0.state = lifecycle }
    }

    /// The resume is enqueued on the ``outbox`` with the transition and posted outside the
    /// lock (after any post enqueued before it), before the exchange starts, after it continues.
    /// The engine task is resumed or paused under the lock, with its transition (it only sets a
    /// flag and hops to its event loop): so the transfer follows the last transition, even when
    /// another thread suspends at the same time, or an observer of the resume suspends the task
    /// from inside the post.
    func resume() {
        let current = snapshot.withLock { $0.currentRequest }
        let (action, cachedExchange, posts): (TaskStateMachine.ResumeAction, CachedExchange?, Bool) = run.withLock { run in
            let action = run.machine.resume(hasRequest: current != nil)
            if action != .none { publish(run.machine.lifecycle) }
            if action == .start {
                run.deadline = TaskDeadline(timeout: environment.configuration.timeoutIntervalForResource, start: .now())
            }
            if action == .resumeExchange { run.engineTask?.resume() }
            let reported = action == .start || action == .resumeExchange
            let posts = reported && environment.enqueue(.resume, of: task, on: outbox)
            return (action, run.cachedExchange, posts)
        }
        // A stored response being replayed continues before the post, as the engine's transfer.
        if action == .resumeExchange { cachedExchange?.setSuspended(false) }
        if posts { environment.post(.resume, of: task, through: outbox) }
        switch action {
        case .start:
            eventsCallStarted()
            if let current { startFirstAttempt(current) }  // adapted first when an interceptor applies (InterceptedExchange)
        case .failInvalidated:
            complete(withResponse: false, error: CourierError.cancelled(url: task.originalRequest?.url), metrics: nil)
        case .resumeExchange, .none:
            break
        }
    }

    /// The suspension is enqueued on the ``outbox`` with the transition and posted outside the
    /// lock once the exchange is paused (the engine task under the lock, as in ``resume()``).
    func suspend() {
        let (suspended, cachedExchange, posts): (Bool, CachedExchange?, Bool) = run.withLock { run in
            let suspended = run.machine.suspend()
            guard suspended else { return (false, nil, false) }
            publish(run.machine.lifecycle)
            run.engineTask?.pause()
            let posts = environment.enqueue(.suspend, of: task, on: outbox)
            return (true, run.cachedExchange, posts)
        }
        guard suspended else { return }
        cachedExchange?.setSuspended(true)
        if posts { environment.post(.suspend, of: task, through: outbox) }
    }

    func cancel() {
        let (action, engineTask, decision): (TaskStateMachine.CancelAction, EngineTask?, Task<Void, Never>?) = run.withLock { run in
            let action = run.machine.cancel()
            if action != .none { publish(run.machine.lifecycle) }
            return (action, run.engineTask, run.retryDecision)
        }
        if action != .none { decision?.cancel() }
        switch action {
        case .cancelExchange:
            engineTask?.cancel()
            run.withLock { $0.cachedExchange }?.cancel()
        case .completeCancelled:
            complete(withResponse: false, error: CourierError.cancelled(url: task.originalRequest?.url), metrics: nil)
        case .none:
            break
        }
    }

    /// Cancels a download, keeping its partial file and handing over the resume data.
    func cancel(producingResumeData handler: @escaping @Sendable (DownloadResumeData?) -> Void) {
        let accepted = run.withLock { run -> Bool in
            guard run.machine.requestResumeData() else { return false }
            run.resumeDataHandler = handler
            return true
        }
        guard accepted else {
            handler(nil)
            return
        }
        cancel()
    }

    // MARK: - Sending

    /// Where a request leaves the session for the engine (every hop: the first request, each
    /// redirect, each answer to a challenge). The seam for a cache lookup before the network.
    func send(_ requested: URLRequest) {
        let reportsEvents = eventsExchangeStarting(hasBody: run.withLock { $0.body != nil })
        // HSTS: an http URL to a known host leaves as https (the current request says so).
        let (request, upgradedFrom) = environment.upgradedForHSTS(requested)
        let interceptor = snapshot.withLock { snapshot in
            snapshot.hstsUpgradedFrom = upgradedFrom
            if upgradedFrom != nil { snapshot.currentRequest = request }
            return snapshot.interceptor
        }
        if reportsEvents, let from = upgradedFrom, let to = request.url {
            reportEvent(.decision(.hstsUpgrade(from: from, to: to)))
        }
        var engineRequest: EngineRequest
        let engine: HTTPEngine
        do {
            let (body, deadline) = run.withLock { ($0.body, $0.deadline) }
            engineRequest = try SessionBridge.engineRequest(for: request, body: body, environment: environment, deadline: deadline)
            engineRequest.reportsMetricsUpdates = reportsEvents
            // A RequestCompressor compresses the body as it is sent (made afresh for every hop).
            let coding = RequestCompressor.find(in: interceptor)?.apply(to: &engineRequest, request: request)
            snapshot.withLock { $0.requestBodyCoding = coding }
            engine = try environment.engine
        } catch {
            complete(withResponse: false, error: error, metrics: nil)
            return
        }
        // The event loop only queues the event: the task's own queue handles it, so user
        // callbacks and cookie-store writes never run on (or hold up) an event loop.
        // Unless nothing an event calls is user code (see `eventsRunInline`): then the loop
        // handles it, one thread hop fewer.
        let inline = eventsRunInline()
        let setReadingPaused: @Sendable (Bool) -> Void = { [self] paused in self.setReadingPaused(paused, by: .callbackQueue) }
        var handleEvent: @Sendable (EngineEvent) -> Void = { [self] event in self.handle(event) }
        // The HTTP cache (SessionConfiguration.cache): answer from it, fail, or send (maybe
        // made conditional) with the cache watching the events. See CachedExchange.
        switch CachedExchange.prepare(&engineRequest, policy: request.cachePolicy, cache: environment.configuration.cache) {
        case .bypass:
            break
        case .network(let exchange):
            if reportsEvents { reportEvent(.decision(.cache(exchange.isConditional ? .conditionalRequest : .miss))) }
            let direct = handleEvent
            exchange.attach { [callbacks] event in callbacks.deliver(event, setReadingPaused: setReadingPaused, to: direct) }
            run.withLock { $0.cachedExchange = exchange }
            handleEvent = exchange.intercepting(handleEvent)
        case .serve(let exchange):
            if reportsEvents { reportEvent(.decision(.cache(.hit))) }
            let start = run.withLock { run in
                run.cachedExchange = exchange
                return run.machine.exchangeStarted()
            }
            let deliver = handleEvent
            if !start.cancel {
                exchange.attach { [callbacks] event in callbacks.deliver(event, setReadingPaused: setReadingPaused, to: deliver) }
                if start.pause { exchange.setSuspended(true) }
            }
            callbacks.async {
                if start.cancel { deliver(.failed(.cancelled, EngineMetrics())) } else { exchange.replay(to: deliver) }
            }
            return
        case .unavailable(let error):
            complete(withResponse: false, error: error, metrics: nil)
            return
        }
        if let observation {
            handleEvent = observation.exchangeStarting(&engineRequest, url: request.url, handleEvent)
        }
        if reportsEvents { eventsRequestSent(engineRequest) }
        let engineTask = engine.execute(consume engineRequest) { [callbacks, handleEvent] event in
            callbacks.deliver(event, inline: inline, setReadingPaused: setReadingPaused, to: handleEvent)
        }
        let start = run.withLock { run in
            run.engineTask = engineTask
            return run.machine.exchangeStarted()
        }
        if start.cancel { engineTask.cancel() }
        if start.pause { engineTask.pause() }
    }

    /// Whether this exchange's events may be handled right where the engine delivers them (an
    /// event loop): a task that may (``mayHandleEventsInline``), with no manager hook that
    /// handling an event calls and no observability backend (those run on the task's queue,
    /// never on an event loop). Event monitors don't count: handling only queues their calls
    /// (``MonitorEventQueue``). Read once per exchange.
    private func eventsRunInline() -> Bool {
        guard mayHandleEventsInline,
            environment.configuration.cache == nil,  // the cache's store writes files
            environment.observer == nil  // log handlers, metrics and tracers are user code too
        else { return false }
        // Checked in place under the settings lock: a copy of every block would retain and
        // release each of them per request.
        return environment.settings.withLock { settings in
            !settings.hooks.watchExchanges
        }
    }

    /// Pauses reading for `reason`, or drops `reason` (see
    /// ``TaskStateMachine/setReadingPaused(_:by:)``). Applied under the lock, so two reasons
    /// changing at once can't leave reading running while one still holds it back.
    func setReadingPaused(_ paused: Bool, by reason: TaskStateMachine.ReadingPause) {
        run.withLock { run in
            switch run.machine.setReadingPaused(paused, by: reason) {
            case .pauseReading:
                run.engineTask?.setReadingPaused(true)
                run.cachedExchange?.setReadingPaused(true)
            case .resumeReading:
                run.engineTask?.setReadingPaused(false)
                run.cachedExchange?.setReadingPaused(false)
            case .none: break
            }
        }
    }

    // MARK: - Engine events (on the task's callback queue)

    private func handle(_ event: EngineEvent) {
        switch event {
        case .uploadProgress(let sent, let expected):
            let previous = snapshot.withLock { snapshot in
                defer {
                    snapshot.countOfBytesSent = sent
                    if let expected { snapshot.countOfBytesExpectedToSend = expected }
                }
                return snapshot.countOfBytesSent
            }
            progress.update(.upload, total: expected, completed: sent)
            let expectedForHook = expected ?? progress.total(.upload)
            environment.hook { $0.taskDidSendBodyData }?(task, sent - previous, sent, expectedForHook)
        case .metricsUpdated(let metrics):
            reportTimeline(canWait: true) { $0.advance(to: metrics) }
        case .responseHead(let head):
            handleHead(head)
        case .bodyPart(let buffer):
            handleBody(buffer)
        case .finished(let metrics):
            exchangeEnded(error: nil, metrics: metrics)
        case .failed(let error, let metrics):
            exchangeEnded(error: error, metrics: metrics)
        }
    }

    /// Makes `error` the task's error and cancels the exchange, so no further bytes are read
    /// (an exchange not handed over yet is cancelled by `send`).
    func fail(_ error: CourierError) {
        let engineTask = run.withLock { run in run.machine.fail(error) ? run.engineTask : nil }
        engineTask?.cancel()
    }

    /// The end of an exchange. The seam where a cache would see a response completed.
    private func exchangeEnded(error: EngineError?, metrics hopMetrics: EngineMetrics) {
        let metrics = snapshot.withLock { $0.record(hopMetrics) }
        eventsExchangeEnded(metrics: hopMetrics, error: error)
        let (didFinishCollecting, monitors) = environment.settings.withLock {
            ($0.hooks.taskDidFinishCollectingMetrics, $0.monitors)
        }
        didFinishCollecting?(task, metrics)
        tellEach(monitors) { $0.task($1, didFinishCollecting: metrics) }
        let action = run.withLock { run in
            let action = run.machine.exchangeEnded(error: error)
            if case .sendNextHop = action {
                run.engineTask = nil
                run.data.removeAll()
            }
            return action
        }
        switch action {
        case .complete(let withResponse, let ending):
            // An interceptor may send the task again instead (InterceptedExchange).
            if interceptEnding(withResponse: withResponse, ending: ending, metrics: metrics) { return }
            complete(
                withResponse: withResponse, error: ending.map { reportedError($0, metrics: metrics) }, metrics: metrics,
                onCallbackQueue: true)  // handling an engine event (inline only for a task with no events)
        case .sendNextHop(let next):
            if mayHandleEventsInline {
                // Maybe on the event loop, inside the engine's report of the last exchange: the
                // next one starts from the task's queue instead (redirects and retries are rare).
                callbacks.async { self.startNextHop(next) }
            } else {
                startNextHop(next)
            }
        }
    }

    /// The error a task ending with `ending` reports; `metrics`: the last hop's. A deadline
    /// timeout says where the task was when it ran out (``DeadlineExpiry``).
    func reportedError(_ ending: TaskStateMachine.Ending, metrics: EngineMetrics?) -> CourierError {
        let url = task.currentRequest?.url
        guard case .engine(.timedOut(.deadline)) = ending else { return ending.reportedError(url: url) }
        let redirects = run.withLock { $0.machine.redirects }
        return DeadlineExpiry(metrics: metrics, redirects: redirects, retries: task.retryCount).error(url: url)
    }

    private func startNextHop(_ next: URLRequest) {
        let previousMethod = task.currentRequest?.httpMethod ?? "GET"
        if !prepareBodyForNextHop(next, previousMethod: previousMethod) {
            complete(withResponse: false, error: CourierError.requestBodyNotReplayable(url: next.url), metrics: nil)
            return
        }
        let redirects = run.withLock { $0.machine.redirects }
        snapshot.withLock { snapshot in
            snapshot.currentRequest = next
            snapshot.countOfBytesReceived = 0
            snapshot.redirectCount = redirects
        }
        send(authorizedAheadOfTime(next))
    }

    /// Makes sure the body can be sent again (see ``BodyReplayRule``): a fresh stream comes
    /// from the need-new-body-stream block, else from the task's own factory (multipart forms).
    /// False: nothing to send.
    func prepareBodyForNextHop(_ next: URLRequest, previousMethod: String) -> Bool {
        let current = run.withLock { $0.body }
        let body = BodyReplayRule.body(current, previousMethod: previousMethod, nextMethod: next.httpMethod) {
            environment.hooks.taskNeedNewBodyStream?(task) ?? bodyFactory?()
        }
        guard let body else { return false }
        run.withLock { $0.body = body }
        return true
    }
}
