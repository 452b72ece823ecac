import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import Synchronization

/// Runs an awaited data task straight on the engine, for a manager that has nothing a
/// ``TaskDelegate`` exists for (see ``TaskEnvironment/awaitedTaskRunner``): the awaiting
/// Swift task sends each hop and waits for its end; the engine's events are handled where they
/// arrive (an event loop), with no callback queue, no thread hop and no reads of the manager's
/// settings per event.
///
/// Everything a user can see stays as ``TaskDelegate`` makes it: the task is in the manager's
/// ``URLSessionManager/tasks`` while it runs, and `resume`, `suspend` and `cancel` on it work;
/// both AFNetworking notifications are posted with the same contents; redirects
/// (``RedirectRule``, the redirect limit), the body of the next hop (``BodyReplayRule``), the
/// cookie jar, the response body limit and the lifecycle follow the same ``TaskStateMachine``.
/// A 401 is delivered as it is: there is no credential and no challenge block to answer it
/// (a credential or block set while such a request is in flight applies from the next one).
///
/// Measured (sequential small GETs against nginx): a ``TaskDelegate`` costs ~15 µs of CPU per
/// request more than the engine alone, most of it generality this task never uses.
final class DirectTaskRunner: TaskDriver {
    /// How the task ended: the body gathered (also after a failure), whether a final response
    /// counts, and the task's error, if any. The final head, its URL and the last exchange's
    /// metrics are on the task's snapshot (read there once by whoever needs them: each copy of
    /// the URL is a retain of an object the caller's other requests often share).
    struct Ended {
        var data = Data()
        var hasResponse = false
        var error: CourierError?
    }

    private struct State {
        var machine: TaskStateMachine
        var engineTask: EngineTask?
        /// The body sent with the next hop.
        var requestBody: RequestBody?
        /// The body of the final response, gathered. (Its head, URL and the last hop's metrics
        /// are on the task's snapshot, as a TaskDelegate's: a redirect's head is never kept.)
        var data = Data()
        /// The awaiting Swift task, while a hop runs (unsafe: the checked form allocates a box
        /// per hop). Resumed exactly once: ``resumeWaiter()`` takes it out under the lock.
        var waiter: Waiter?
        /// The request of the hop in flight (its events read it: the event closure then
        /// captures only the runner, and needs no context allocated per hop).
        var hopRequest: URLRequest?
        /// The task's progress, once something asked for it (``progress``).
        var progress: TaskProgress?
        /// Set by ``finish(response:object:error:data:serializer:)``: progress made later has ended.
        var progressEnded = false
        /// The task's one deadline, fixed when it starts; every hop it sends shares it.
        var deadline: TaskDeadline?
    }

    /// The Swift task awaiting a hop, and what the hop ended with once it did (kept for the
    /// resume ``exchangeEnded(error:metrics:)`` queued).
    private struct Waiter {
        let continuation: UnsafeContinuation<HopResult, Never>
        var endedWith: TaskStateMachine.EndAction?
    }

    let task: DataTask
    let environment: TaskEnvironment
    /// Whether the manager had event monitors (none taking task events) when the task was made:
    /// they hear each hop's metrics from the awaiting Swift task.
    private let monitored: Bool
    /// The request body's length, when known (the upload total).
    private let bodyLength: Int64?
    private let state: Mutex<State>
    /// Posts the task's resumes, suspensions and completion in the order of their transitions.
    let outbox = TaskNotificationOutbox()

    init(task: DataTask, body: RequestBody?, environment: TaskEnvironment, monitored: Bool) {
        self.task = task
        self.environment = environment
        self.monitored = monitored
        let machine = TaskStateMachine(
            destination: .memory, maximumRedirects: environment.configuration.maximumRedirects,
            maximumBodySize: environment.configuration.maximumResponseBodySize)
        self.state = Mutex(State(machine: machine, requestBody: body))
        let bodyLength = body?.expectedLength
        self.bodyLength = bodyLength
        if let bodyLength { task.snapshot.withLock { $0.countOfBytesExpectedToSend = bodyLength } }
    }

    /// The task's progress, made on first use from the task's counts (which every event
    /// updates first): an awaited call has no progress block, and most never ask, so a task
    /// makes none and its events update none until then. Made under the lock events check it
    /// under, so no update is lost in between.
    var progress: TaskProgress {
        state.withLock { state in
            if let existing = state.progress { return existing }
            let counts = task.snapshot.withLock {
                (
                    sent: $0.countOfBytesSent, toSend: $0.countOfBytesExpectedToSend, received: $0.countOfBytesReceived,
                    toReceive: $0.countOfBytesExpectedToReceive
                )
            }
            let uploadTotal =
                bodyLength ?? task.originalRequest?.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) } ?? counts.toSend
            let made = TaskProgress(uploadTotal: uploadTotal, uploadHandler: nil, downloadHandler: nil)
            if counts.sent > 0 { made.update(.upload, total: nil, completed: counts.sent, notify: false) }
            if counts.toReceive >= 0 || counts.received > 0 {
                made.update(.download, total: counts.toReceive, completed: counts.received, notify: false)
            }
            if state.progressEnded { made.finish() }
            state.progress = made
            return made
        }
    }

    // MARK: - Control (from the task's handle, any thread)

    var hasStarted: Bool { state.withLock { $0.machine.started } }

    /// The engine task of the hop in flight, if any (tests read its pause state).
    var engineTask: EngineTask? { state.withLock { $0.engineTask } }

    /// The awaiting Swift task starts the task (``exchange()``); a resume from the handle
    /// continues it after a suspension. Its post is enqueued on the ``outbox`` with the
    /// transition and posted outside the lock (as a suspension's). The engine task is resumed
    /// or paused under the lock, with its transition (it only sets a flag and hops to its event
    /// loop): so the transfer follows the last transition, even when another thread suspends at
    /// the same time, or an observer of the resume suspends the task from inside the post.
    func resume() {
        let posts = state.withLock { state in
            guard state.machine.started, state.machine.resume(hasRequest: true) == .resumeExchange else { return false }
            publish(state.machine.lifecycle)
            state.engineTask?.resume()
            return environment.enqueue(.resume, of: task, on: outbox)
        }
        if posts { environment.post(.resume, of: task, through: outbox) }
    }

    func suspend() {
        let posts = state.withLock { state in
            guard state.machine.suspend() else { return false }
            publish(state.machine.lifecycle)
            state.engineTask?.pause()
            return environment.enqueue(.suspend, of: task, on: outbox)
        }
        if posts { environment.post(.suspend, of: task, through: outbox) }
    }

    /// Cancels the exchange in flight; between hops, the next one starts cancelled (see
    /// ``TaskStateMachine/exchangeStarted()``), and before the start the task ends at once.
    func cancel() {
        let (action, engineTask) = state.withLock { state in
            let action = state.machine.cancel()
            if action != .none { publish(state.machine.lifecycle) }
            return (action, state.engineTask)
        }
        if action == .cancelExchange { engineTask?.cancel() }
    }

    func cancel(producingResumeData handler: @escaping @Sendable (DownloadResumeData?) -> Void) {
        handler(nil)  // a data task has nothing to resume
        cancel()
    }

    /// Writes the machine's lifecycle to the task's public state (the machine's lock is held).
    private func publish(_ lifecycle: SessionTask.State) {
        task.snapshot.withLock { $0.state = lifecycle }
    }

    // MARK: - Running (the awaiting Swift task)

    /// Runs the task's hops to the end; cancelling the calling Swift task cancels the task.
    /// The task is then still in the manager's list: ``finish(response:object:error:data:serializer:)``
    /// ends it.
    ///
    /// The task starts (and its resume is reported) before the cancellation handler is
    /// installed, as an awaited ``TaskDelegate``'s does: a Swift task that is already cancelled
    /// then cancels a started task, whose first exchange starts cancelled, so the notifications
    /// (a resume, then a completion with the exchange's metrics) are the same.
    func exchange() async -> Ended {
        let first = start()
        return await withTaskCancellationHandler {
            await runHops(from: first)
        } onCancel: {
            self.cancel()
        }
    }

    /// Resumes the task for its first hop and reports it; nil when it was cancelled before it
    /// started or its session was invalidated.
    private func start() -> URLRequest? {
        let current = task.snapshot.withLock { $0.currentRequest }
        let (start, posts) = state.withLock { state in
            let action = state.machine.resume(hasRequest: current != nil)
            if action != .none { publish(state.machine.lifecycle) }
            if action == .start {
                state.deadline = TaskDeadline(timeout: environment.configuration.timeoutIntervalForResource, start: .now())
            }
            return (action, action == .start && environment.enqueue(.resume, of: task, on: outbox))
        }
        if posts { environment.post(.resume, of: task, through: outbox) }
        guard start == .start, let current else { return nil }
        return current
    }

    /// What sending a hop came to: the machine's decision when its exchange ended, or the
    /// error that kept it from being sent (a request the engine can't take, no engine).
    private enum HopResult {
        case ended(TaskStateMachine.EndAction)
        case notSent(CourierError)
    }

    /// After a hop: the next one's request, or how the task ended.
    private enum NextStep {
        case send(URLRequest)
        case finished(Ended)
    }

    // The async part is only the loop and the wait: everything else is in synchronous
    // functions, so this frame (allocated per call from the task's allocator, and past its
    // first slab from malloc) holds little more than the request.
    private func runHops(from first: URLRequest?) async -> Ended {
        guard var request = first else {
            // Cancelled before it started, or its session was invalidated.
            return end(.complete(withResponse: false, ending: .cancelled), request: task.originalRequest)
        }
        while true {
            switch await send(request) {
            case .notSent(let error):
                return Ended(error: error)
            case .ended(let action):
                if monitored { reportCollectedMetrics() }
                switch step(after: action, request: request) {
                case .send(let next): request = next
                case .finished(let ended): return ended
                }
            }
        }
    }

    /// Tells the monitors the hop's metrics, from the awaiting Swift task (off the event loops,
    /// before the task's end), as a ``TaskDelegate`` tells them at each exchange's end.
    @inline(never)
    private func reportCollectedMetrics() {
        guard let metrics = task.snapshot.withLock({ $0.metrics }) else { return }
        let task = self.task
        for monitor in environment.monitors { monitor.task(task, didFinishCollecting: metrics) }
    }

    /// What follows a hop that ended with `action`: a redirect's request (its body replayed as
    /// ``BodyReplayRule`` says), or the task's end.
    @inline(never)
    private func step(after action: TaskStateMachine.EndAction, request: URLRequest) -> NextStep {
        guard case .sendNextHop(let next) = action else { return .finished(end(action, request: request)) }
        let replayed = BodyReplayRule.body(
            state.withLock { $0.requestBody }, previousMethod: request.httpMethod, nextMethod: next.httpMethod, fresh: { nil })
        guard let nextBody = replayed else { return .finished(Ended(error: .requestBodyNotReplayable(url: next.url))) }
        state.withLock { $0.requestBody = nextBody }
        task.snapshot.withLock { snapshot in
            snapshot.currentRequest = next
            snapshot.countOfBytesReceived = 0
        }
        return .send(next)
    }

    /// Sends one hop and returns what the machine decided when it ended. The engine request is
    /// made inside the continuation's (synchronous) closure, so it is never kept in an async frame.
    private func send(_ requested: URLRequest) async -> HopResult {
        // HSTS: an http URL to a known host leaves as https (the current request says so).
        let (request, upgradedFrom) = environment.upgradedForHSTS(requested)
        if environment.configuration.hsts != nil {
            task.snapshot.withLock { snapshot in
                snapshot.hstsUpgradedFrom = upgradedFrom
                if upgradedFrom != nil { snapshot.currentRequest = request }
            }
        }
        return await withUnsafeContinuation { continuation in
            let engineRequest: EngineRequest
            let engine: HTTPEngine
            do {
                let (body, deadline) = state.withLock { ($0.requestBody, $0.deadline) }
                engineRequest = try SessionBridge.engineRequest(for: request, body: body, environment: environment, deadline: deadline)
                engine = try environment.engine
            } catch {
                continuation.resume(returning: .notSent(error as? CourierError ?? .connectionLost(url: request.url, reason: "\(error)")))
                return
            }
            state.withLock { state in
                state.waiter = Waiter(continuation: continuation)
                state.hopRequest = request
            }
            let engineTask = engine.execute(consume engineRequest) { [self] event in
                self.handle(event)
            }
            let start = state.withLock { state in
                state.engineTask = engineTask
                return state.machine.exchangeStarted()
            }
            if start.cancel { engineTask.cancel() }
            if start.pause { engineTask.pause() }
        }
    }

    /// How a task that ended with `action` (a completion) ended; `request` (the last hop's)
    /// names it in an error. (Its URL is read only for an error: the caller's URL object is often
    /// shared by every request, and each read is a retain other threads contend on.)
    private func end(_ action: TaskStateMachine.EndAction, request: URLRequest?) -> Ended {
        guard case .complete(let withResponse, let ending) = action else {
            return Ended(error: .connectionLost(url: request?.url, reason: "the task ended between two hops"))
        }
        let (data, redirects) = state.withLock { state in
            _ = state.machine.claimCompletion()
            defer {
                state.data = Data()
                state.engineTask = nil
            }
            return (state.data, state.machine.redirects)
        }
        // The final head went to the task when it arrived (``handleHead(_:request:)``) and each
        // hop's metrics when it ended: they stay there (set again, a response a reader already
        // made would be dropped). The received count is the task's already (each chunk's).
        let hasResponse = withResponse && task.snapshot.withLock { $0.head != nil && $0.responseURL != nil }
        var ended = Ended(data: data, hasResponse: hasResponse, error: ending.map { reportedError($0, url: request?.url, redirects: redirects) })
        if ended.error == nil, !hasResponse {
            ended.error = .connectionLost(url: request?.url, reason: "no response")
        }
        return ended
    }

    /// The error a task ending with `ending` reports; a deadline timeout says where the task
    /// was when it ran out (``DeadlineExpiry``, from the last hop's metrics on the snapshot).
    private func reportedError(_ ending: TaskStateMachine.Ending, url: URL?, redirects: Int) -> CourierError {
        guard case .engine(.timedOut(.deadline)) = ending else { return ending.reportedError(url: url) }
        let metrics = task.snapshot.withLock { $0.metrics }
        return DeadlineExpiry(metrics: metrics, redirects: redirects, retries: 0).error(url: url)
    }

    /// Ends the task as ``TaskDelegate`` does: its public state, leaving the manager's list,
    /// then the completion block and AFNetworking's completion notification (with `object`,
    /// the serializer's output, and `data`, the body). `serializer` is the one the notification
    /// names (nil: the manager's, read then).
    func finish(response: HTTPURLResponse?, object: (any Sendable)?, error: (any Error)?, data: Data?, serializer: (any ResponseSerializer)?) {
        let progress = state.withLock { state in
            state.progressEnded = true
            return state.progress
        }
        progress?.finish()
        state.withLock { state in
            _ = state.machine.claimCompletion()
            state.machine.finished()
            task.snapshot.withLock { snapshot in
                snapshot.state = state.machine.lifecycle
                snapshot.error = error
            }
        }
        environment.registry.unregister(task)
        environment.taskCompleted(
            task, response: response, data: data, object: object, error: error, serializer: serializer, assetURL: nil,
            outbox: outbox)
    }

    // MARK: - Engine events (where they arrive: an event loop)

    private func handle(_ event: EngineEvent) {
        switch event {
        case .uploadProgress(let sent, let expected):
            task.snapshot.withLock { snapshot in
                snapshot.countOfBytesSent = sent
                if let expected { snapshot.countOfBytesExpectedToSend = expected }
            }
            state.withLock { $0.progress }?.update(.upload, total: expected, completed: sent, notify: false)
        case .metricsUpdated:
            break  // not asked for: a direct task has no event monitor
        case .responseHead(let head):
            guard let request = state.withLock({ $0.hopRequest }) else { return }
            handleHead(head, request: request)
        case .bodyPart(let buffer):
            let failure: (EngineTask?, CourierError)? = state.withLock { state in
                switch state.machine.receivedBodyChunk(count: buffer.readableBytes) {
                case .gather(let received):
                    buffer.withUnsafeReadableBytes { state.data.append(contentsOf: $0) }
                    task.snapshot.withLock { $0.countOfBytesReceived = received }
                    state.progress?.update(.download, total: nil, completed: received, notify: false)
                    return nil
                case .failBodyTooLarge(let limit, let received):
                    task.snapshot.withLock { $0.countOfBytesReceived = received }  // as a TaskDelegate counts it
                    let error = CourierError.responseBodyTooLarge(
                        url: state.hopRequest?.url, limit: limit, contentLength: nil, received: received)
                    return state.machine.fail(error) ? (state.engineTask, error) : nil
                case .discard, .stream, .write:
                    return nil
                }
            }
            failure?.0?.cancel()
        case .finished(let metrics):
            exchangeEnded(error: nil, metrics: metrics)
        case .failed(let error, let metrics):
            exchangeEnded(error: error, metrics: metrics)
        }
    }

    /// Cookies, then a redirect to follow (its head is not kept) or the final head.
    private func handleHead(_ head: HTTPResponseHead, request: URLRequest) {
        guard let url = request.url else { return }
        environment.storeCookies(from: head.headers, for: request, url: url)
        environment.noteStrictTransportSecurity(from: head.headers, url: url)
        let location = head.headers.first(name: "location")
        let maximumRedirects = environment.configuration.maximumRedirects
        let next: URLRequest?
        do {
            next = try RedirectRule.followed(
                from: request, statusCode: Int(head.status.code), location: location, maximumRedirects: maximumRedirects)
        } catch {
            let engineTask = state.withLock { $0.machine.fail(error) ? $0.engineTask : nil }
            engineTask?.cancel()
            return
        }
        if let next {
            state.withLock { $0.machine.redirectDecided(next) }
            return
        }
        let expectedLength = ResponseHeadBridge.expectedLength(of: head)
        // The task's response from here on, as a TaskDelegate's: `task.response` reads it
        // while the body comes in (and after a failure that follows the head).
        task.snapshot.withLock { snapshot in
            snapshot.setResponse(head: head, url: url, made: nil)
            snapshot.countOfBytesExpectedToReceive = expectedLength
        }
        let engineTask: EngineTask? = state.withLock { state in
            state.progress?.update(.download, total: expectedLength, completed: 0, notify: false)
            guard case .failBodyTooLarge(let limit, let contentLength) = state.machine.receivedFinalHead(expectedLength: expectedLength)
            else { return nil }
            let error = CourierError.responseBodyTooLarge(url: url, limit: limit, contentLength: contentLength, received: 0)
            return state.machine.fail(error) ? state.engineTask : nil
        }
        engineTask?.cancel()
    }

    private func exchangeEnded(error: EngineError?, metrics: EngineMetrics) {
        task.snapshot.withLock { _ = $0.record(metrics) }  // each hop's, as a TaskDelegate's
        let waiting = state.withLock { state in
            let action = state.machine.exchangeEnded(error: error)
            state.engineTask = nil
            if case .sendNextHop = action { state.data = Data() }
            guard state.waiter != nil else { return false }
            state.waiter?.endedWith = action
            return true
        }
        // The closure captures only `self`: no context to allocate per hop.
        if waiting { ResumeBatch.run { self.resumeWaiter() } }
    }

    /// Resumes the awaiting Swift task with what its hop ended with (queued by ``exchangeEnded(error:metrics:)``).
    private func resumeWaiter() {
        let taken: (UnsafeContinuation<HopResult, Never>, TaskStateMachine.EndAction)? = state.withLock { state in
            guard let waiter = state.waiter, let action = waiter.endedWith else { return nil }
            state.waiter = nil
            return (waiter.continuation, action)
        }
        guard let (continuation, action) = taken else { return }
        continuation.resume(returning: .ended(action))
    }
}

extension URLSessionManager {
    /// Registers a data task for `request` run by a ``DirectTaskRunner`` (the caller checked
    /// ``TaskEnvironment/awaitedTaskRunner``); not started: ``DirectTaskRunner/exchange()`` starts it.
    /// `monitored`: see ``TaskEnvironment/AwaitedTaskRunner/direct(monitored:)``.
    func registerDirectTask(_ request: URLRequest, monitored: Bool) -> (DataTask, DirectTaskRunner) {
        register({ DataTask(taskIdentifier: $0, request: request) }) { [environment] task in
            DirectTaskRunner(task: task, body: Self.body(of: request), environment: environment, monitored: monitored)
        }
    }
}
