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
final class TaskDelegate: Sendable {
    enum Kind: Sendable {
        case data
        case upload
        case download(destination: (@Sendable (URL, HTTPURLResponse) -> URL)?)
        /// ``URLSessionManager/bytes(for:body:)``: the final head and the body go to the stream.
        case stream(ResponseBodyStream)
    }

    /// What to do with the exchange in flight once it ends.
    private enum Continuation {
        case deliver
        case follow(URLRequest)
        case authenticate(URLRequest)
    }

    /// What can hold reading the response back; reading restarts when none does.
    private enum ReadingPause: Hashable {
        /// The task's callback queue has too much body waiting.
        case callbackQueue
        /// A ``ResponseBodyStream`` consumer is behind.
        case stream
        /// The download file's writes are behind (a disk slower than the network).
        case downloadFile
    }

    private struct State {
        var started = false
        var completed = false
        var engineTask: EngineTask?
        /// Who asks for reading to be paused (one engine flag, several reasons).
        var readingPausedBy: Set<ReadingPause> = []
        var data = Data()
        var continuation: Continuation = .deliver
        var redirects = 0
        var authentication = AuthenticationAttempts()
        var lastStatus: Int?
        var download: DownloadSink?
        var cancelRequested = false
        var hopUploadBase: Int64 = 0
        /// Whether the body goes to a file (a download task, or a data task that became one).
        var isDownload = false
        /// A failure found by the session itself (a download file that can't be written, a
        /// body that can't be replayed); it wins over the engine's cancellation error.
        var failure: (any Error)?
        /// Set by `cancel(producingResumeData:)`.
        var resumeDataHandler: (@Sendable (DownloadResumeData?) -> Void)?
        /// A resumed download whose partial file already held the whole resource (416).
        var alreadyComplete = false
    }

    let kind: Kind
    /// The task this delegate runs; replaced once when a data task becomes a download task.
    private let currentTask: Mutex<SessionTask>
    var task: SessionTask { currentTask.withLock { $0 } }
    /// See ``TaskSetup/finisher``: one thread hop instead of three for the async shape.
    private let finisher: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    /// The download this task resumes, if any.
    private let resumeData: DownloadResumeData?
    /// See ``TaskSetup/bodyFactory``.
    private let bodyFactory: (@Sendable () -> RequestBody?)?
    /// The body sent with the next request (replaced when a redirect needs a fresh stream).
    private let body: Mutex<RequestBody?>
    /// Totals, `Progress` objects, progress blocks and streams, for both directions.
    let progress: TaskProgress
    private let completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)?
    private let core: URLSessionManager
    private let state = Mutex(State())
    /// Where this task's engine events are handled and so where its callbacks run: off the
    /// event loop, in order (see ``TaskCallbackQueue``).
    private let callbacks = TaskCallbackQueue(label: "courier.task-callbacks")
    /// A serializer for this task only (the async typed API), instead of the manager's.
    let serializerOverride: (any ResponseSerializer)?
    /// See ``TaskSetup/deliversHeadOnly``.
    let deliversHeadOnly: Bool

    /// The upload progress (total from the expected counts; when unknown, the request's
    /// Content-Length).
    var uploadProgress: Progress { progress.object(.upload) }

    /// The download progress.
    var downloadProgress: Progress { progress.object(.download) }

    init(kind: Kind, task: SessionTask, body: RequestBody?, core: URLSessionManager, setup: TaskSetup) {
        self.finisher = setup.finisher
        self.serializerOverride = setup.serializer
        self.deliversHeadOnly = setup.deliversHeadOnly
        self.kind = kind
        self.currentTask = Mutex(task)
        self.resumeData = setup.resumeData
        self.bodyFactory = setup.bodyFactory
        self.body = Mutex(body)
        if case .download = kind { state.withLock { $0.isDownload = true } }
        self.core = core
        self.completionHandler = setup.completion
        let bodyLength = body?.expectedLength
        if let bodyLength { task.snapshot.withLock { $0.countOfBytesExpectedToSend = bodyLength } }
        // AFN: an unknown upload size falls back to the request's Content-Length.
        let uploadTotal = bodyLength ?? task.originalRequest?.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) } ?? -1
        self.progress = TaskProgress(
            uploadTotal: uploadTotal, uploadHandler: setup.uploadProgress, downloadHandler: setup.downloadProgress)
    }

    // MARK: - Control

    /// Whether the task was ever resumed (it may be on an engine's connection).
    var hasStarted: Bool { state.withLock { $0.started } }

    func resume() {
        enum Step { case start(URLRequest), unpause(EngineTask?), invalidated, nothing }
        let step: Step = task.snapshot.withLock { snapshot in
            guard snapshot.state == .suspended else { return .nothing }
            snapshot.state = .running
            let current = snapshot.currentRequest
            return state.withLock { state in
                if state.started { return .unpause(state.engineTask) }
                state.started = true
                // No request: the task was made after its session was invalidated.
                return current.map { .start($0) } ?? .invalidated
            }
        }
        switch step {
        case .start(let request):
            core.taskDidResume(task)
            send(authorizedAheadOfTime(request))
        case .unpause(let engineTask):
            core.taskDidResume(task)
            engineTask?.resume()
        case .invalidated:
            complete(withResponse: false, error: CourierError.cancelled(url: task.originalRequest?.url), metrics: nil)
        case .nothing:
            break
        }
    }

    func suspend() {
        let engineTask: EngineTask?? = task.snapshot.withLock { snapshot in
            guard snapshot.state == .running else { return .none }
            snapshot.state = .suspended
            return .some(state.withLock { $0.engineTask })
        }
        guard let engineTask else { return }
        engineTask?.pause()
        core.taskDidSuspend(task)
    }

    func cancel() {
        let (engineTask, neverStarted): (EngineTask?, Bool) = task.snapshot.withLock { snapshot in
            guard snapshot.state != .completed, snapshot.state != .canceling else { return (nil, false) }
            snapshot.state = .canceling
            return state.withLock { state in
                state.cancelRequested = true
                return (state.engineTask, !state.started)
            }
        }
        if let engineTask {
            engineTask.cancel()
        } else if neverStarted || task.state == .canceling {
            complete(withResponse: false, error: CourierError.cancelled(url: task.originalRequest?.url), metrics: nil)
        }
    }

    /// Cancels a download, keeping its partial file and handing over the resume data.
    func cancel(producingResumeData handler: @escaping @Sendable (DownloadResumeData?) -> Void) {
        let accepted = state.withLock { state -> Bool in
            guard !state.completed, state.resumeDataHandler == nil else { return false }
            state.resumeDataHandler = handler
            return true
        }
        guard accepted else {
            handler(nil)
            return
        }
        cancel()
    }

    // MARK: - Sending

    private func send(_ request: URLRequest) {
        let engineRequest: EngineRequest
        let engine: HTTPEngine
        do {
            engineRequest = try core.engineRequest(for: request, body: body.withLock { $0 })
            engine = try core.engine
        } catch {
            complete(withResponse: false, error: error, metrics: nil)
            return
        }
        // The event loop only queues the event: the task's own queue handles it, so user
        // callbacks and cookie-store writes never run on (or hold up) an event loop.
        let setReadingPaused: @Sendable (Bool) -> Void = { [self] paused in self.setReadingPaused(paused) }
        let handleEvent: @Sendable (EngineEvent) -> Void = { [self] event in self.handle(event) }
        let engineTask = engine.execute(engineRequest) { [callbacks] event in
            callbacks.deliver(event, setReadingPaused: setReadingPaused, to: handleEvent)
        }
        let cancelNow = state.withLock { state in
            state.engineTask = engineTask
            return state.cancelRequested
        }
        if cancelNow { engineTask.cancel() }
        if task.state == .suspended { engineTask.pause() }
    }

    /// Backpressure from the callback queue: stops or restarts reading the response. A task
    /// the caller suspended stays paused.
    private func setReadingPaused(_ paused: Bool) {
        setReadingPaused(paused, by: .callbackQueue)
    }

    /// Pauses reading for `reason`, or drops `reason`: reading restarts only when no reason is
    /// left and the caller has not suspended the task. Decided and applied under the locks, so
    /// two reasons changing at once can't leave reading running while one still holds it back.
    private func setReadingPaused(_ paused: Bool, by reason: ReadingPause) {
        task.snapshot.withLock { snapshot in
            state.withLock { state in
                if paused {
                    state.readingPausedBy.insert(reason)
                    state.engineTask?.setReadingPaused(true)
                } else {
                    state.readingPausedBy.remove(reason)
                    guard state.readingPausedBy.isEmpty, snapshot.state != .suspended else { return }
                    state.engineTask?.setReadingPaused(false)
                }
            }
        }
    }

    // MARK: - Engine events (on the task's callback queue)

    private func handle(_ event: EngineEvent) {
        switch event {
        case .uploadProgress(let sent, let expected):
            let base = state.withLock { $0.hopUploadBase }
            let total = base + sent
            let previous = task.snapshot.withLock { snapshot in
                defer {
                    snapshot.countOfBytesSent = total
                    if let expected { snapshot.countOfBytesExpectedToSend = base + expected }
                }
                return snapshot.countOfBytesSent
            }
            progress.update(.upload, total: expected.map { base + $0 }, completed: total)
            let expectedForHook = expected.map { base + $0 } ?? progress.total(.upload)
            core.hooks.taskDidSendBodyData?(task, total - previous, total, expectedForHook)
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

    private func handleHead(_ head: HTTPResponseHead) {
        guard let request = task.currentRequest, let url = request.url else { return }
        // Foundation's HTTPURLResponse costs ~3.5 µs per header field to make on Linux: make it
        // only when a hook needs it here; otherwise the task makes it off the event loop.
        // A response a redirect or challenge hook needed for this head (counted on the task).
        var made: HTTPURLResponse?
        func response() -> HTTPURLResponse? {
            if let made { return made }
            let fresh = ResponseHeadBridge.makeResponse(head, url: url)
            if fresh != nil { task.snapshot.withLock { $0.responsesBuilt += 1 } }
            made = fresh
            return fresh
        }
        let hooks = core.hooks
        let status = Int(head.status.code)
        core.storeCookies(from: head.headers, for: request, url: url)
        state.withLock { $0.lastStatus = status }

        // Redirects are the session's job, not the engine's.
        if RedirectRule.redirectStatusCodes.contains(status), let location = head.headers.first(name: "location"),
            core.configuration.maximumRedirects > 0,
            let proposed = RedirectRule.redirectedRequest(from: request, statusCode: status, location: location)
        {
            let next: URLRequest?
            if let hook = hooks.taskWillPerformHTTPRedirection, let response = response() {
                next = hook(task, response, proposed)
            } else {
                next = proposed
            }
            if let next {
                state.withLock { $0.continuation = .follow(next) }
                return
            }
        }

        // 401 with a challenge we can answer: send again with credentials.
        // The `HTTPURLResponse` is made only for a challenge block (its signature takes one).
        if status == 401, let retry = authenticationRetry(for: request, head: head, response: response) {
            state.withLock { $0.continuation = .authenticate(retry) }
            return
        }

        let expectedLength = ResponseHeadBridge.expectedLength(of: head)
        task.snapshot.withLock { snapshot in
            snapshot.setResponse(head: head, url: url, made: made)
            snapshot.countOfBytesExpectedToReceive = expectedLength
        }
        progress.update(.download, total: expectedLength, completed: 0, notify: false)
        // From here on the task's own (memoized) response: the hook, the stream and
        // `task.response` all see one object.
        if let dataTask = task as? DataTask, let hook = hooks.dataTaskDidReceiveResponse, let response = task.response {
            switch hook(dataTask, response) {
            case .allow: break
            case .cancel: cancel()
            case .becomeDownload: becomeDownload(dataTask)
            }
        }
        if state.withLock({ $0.isDownload }) {
            openDownloadFile(for: head, expectedLength: expectedLength)
        } else if case .stream(let stream) = kind {
            if let response = task.response { stream.receive(response) }
        } else if let limit = core.configuration.maximumResponseBodySize, expectedLength > limit {
            failBodyTooLarge(limit: limit, contentLength: expectedLength, received: 0)
        }
    }

    /// Fails the task with ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)``
    /// and cancels the exchange, so no further bytes are read.
    private func failBodyTooLarge(limit: Int64, contentLength: Int64?, received: Int64) {
        let error = CourierError.responseBodyTooLarge(
            url: task.currentRequest?.url, limit: limit, contentLength: contentLength, received: received)
        let engineTask = state.withLock { state in
            if state.failure == nil { state.failure = error }
            state.cancelRequested = true  // an exchange not handed over yet is cancelled by `send`
            return state.engineTask
        }
        engineTask?.cancel()
    }

    /// AFN's did-become-download-task: the rest of the body goes to a file, and a new
    /// ``DownloadTask`` (sharing this transfer's state) takes the data task's place.
    private func becomeDownload(_ dataTask: DataTask) {
        let downloadTask = core.replace(dataTask, withDownloadTaskRunBy: self)
        currentTask.withLock { $0 = downloadTask }
        state.withLock { $0.isDownload = true }
        core.hooks.dataTaskDidBecomeDownloadTask?(dataTask, downloadTask)
    }

    /// Picks the file the body goes to. A resumed download follows ``ResumeResponseRule``: it
    /// appends to its partial file on a 206 starting exactly at the requested offset, starts the
    /// file over (truncated, written from 0) on 200, is already complete on 416 naming the
    /// file's size, and fails with ``CourierError/invalidResumeResponse(url:reason:)`` on any
    /// other 206, leaving the partial file as it was; anything else goes to a new temporary file.
    private func openDownloadFile(for head: HTTPResponseHead, expectedLength: Int64) {
        let status = Int(head.status.code)
        do {
            let sink: DownloadSink?
            if let resumeData {
                // The offset actually asked for (0 when the request had no Range).
                let requested = ContentRange.requestedOffset(rangeHeader: task.originalRequest?.value(forHTTPHeaderField: "Range")) ?? 0
                let rule = ResumeResponseRule.decide(
                    status: status, requestedOffset: requested, contentRange: head.headers.first(name: "content-range"),
                    contentLength: head.headers.first(name: "content-length"), knownTotal: resumeData.totalLength,
                    contentCoded: ResumeResponseRule.isContentCoded(head.headers.first(name: "content-encoding")))
                switch rule {
                case .append(let offset, let expectedTotal):
                    sink = try DownloadSink(fileURL: resumeData.partialFileURL, offset: offset, isCallersFile: true)
                    resumed(at: offset, expectedTotal: expectedTotal)
                case .restart(let expectedTotal):
                    sink = try DownloadSink(fileURL: resumeData.partialFileURL, offset: 0, isCallersFile: true)
                    resumed(at: 0, expectedTotal: expectedTotal)
                case .alreadyComplete:
                    state.withLock { $0.alreadyComplete = true }
                    sink = nil
                case .notResumed:
                    sink = try DownloadSink()
                case .refuse(let reason):
                    throw CourierError.invalidResumeResponse(url: task.currentRequest?.url, reason: reason)
                }
            } else {
                sink = try DownloadSink()
            }
            state.withLock { $0.download = sink }
        } catch {
            let engineTask = state.withLock { state in
                state.failure = error
                state.cancelRequested = true  // also when the engine task is not recorded yet
                return state.engineTask
            }
            engineTask?.cancel()
        }
    }

    /// Reports a resumed download's starting point (AFN's did-resume-at-offset).
    private func resumed(at offset: Int64, expectedTotal: Int64) {
        task.snapshot.withLock { snapshot in
            snapshot.countOfBytesReceived = offset
            snapshot.countOfBytesExpectedToReceive = expectedTotal
        }
        progress.update(.download, total: expectedTotal, completed: offset)
        if let downloadTask = task as? DownloadTask {
            core.hooks.downloadTaskDidResume?(downloadTask, offset, expectedTotal)
        }
    }

    private func handleBody(_ buffer: ByteBuffer) {
        let (continuation, sink, isDownload, failed) = state.withLock {
            ($0.continuation, $0.download, $0.isDownload, $0.failure != nil)
        }
        guard case .deliver = continuation else { return }  // a redirect or 401 body: discarded
        if isDownload && sink == nil { return }  // a download already complete (416), or failing
        if failed { return }  // e.g. over the body size limit: the exchange is being cancelled
        let received = task.snapshot.withLock { snapshot in
            snapshot.countOfBytesReceived += Int64(buffer.readableBytes)
            return snapshot.countOfBytesReceived
        }
        if !isDownload, case .stream(let stream) = kind {
            stream.append(buffer) { [self] paused in self.setReadingPaused(paused, by: .stream) }
        } else if !isDownload, let limit = core.configuration.maximumResponseBodySize, received > limit {
            failBodyTooLarge(limit: limit, contentLength: nil, received: received)
            return
        } else if let sink {
            sink.write(buffer) { [self] paused in self.setReadingPaused(paused, by: .downloadFile) }
            if let downloadTask = task as? DownloadTask {
                core.hooks.downloadTaskDidWriteData?(
                    downloadTask, Int64(buffer.readableBytes), received, task.countOfBytesExpectedToReceive)
            }
        } else {
            // Straight from the buffer into the body: a separate `Data` only when a block wants the chunk.
            buffer.withUnsafeReadableBytes { bytes in state.withLock { $0.data.append(contentsOf: bytes) } }
            if let dataTask = task as? DataTask, let didReceiveData = core.hooks.dataTaskDidReceiveData {
                didReceiveData(dataTask, Data(buffer.readableBytesView))
            }
        }
        progress.update(.download, total: nil, completed: received)
    }

    private func exchangeEnded(error: EngineError?, metrics: EngineMetrics) {
        task.snapshot.withLock { $0.metrics = metrics }
        core.hooks.taskDidFinishCollectingMetrics?(task, metrics)
        core.monitors.forEach { $0.task(task, didFinishCollecting: metrics) }
        let continuation = state.withLock { state in
            defer { state.continuation = .deliver }
            return state.continuation
        }
        if let error {
            let (cancelled, failure) = state.withLock { ($0.cancelRequested, $0.failure) }
            let url = task.currentRequest?.url
            let reported: any Error
            if let failure {
                reported = failure
            } else if cancelled {
                reported = CourierError.cancelled(url: url)
            } else {
                reported = core.courierError(error, url: url)
            }
            complete(withResponse: true, error: reported, metrics: metrics)
            return
        }
        switch continuation {
        case .deliver:
            // A failure found here (a body over the size limit) wins even when the exchange
            // managed to finish before its cancellation took effect.
            complete(withResponse: true, error: state.withLock { $0.failure }, metrics: metrics)
        case .follow(let next):
            let count = state.withLock { state in
                state.redirects += 1
                return state.redirects
            }
            if count > core.configuration.maximumRedirects {
                complete(withResponse: false, error: CourierError.tooManyRedirects(url: next.url, limit: core.configuration.maximumRedirects), metrics: metrics)
                return
            }
            startNextHop(next)
        case .authenticate(let next):
            startNextHop(next)
        }
    }

    private func startNextHop(_ next: URLRequest) {
        let previousMethod = task.currentRequest?.httpMethod ?? "GET"
        let cancelled = state.withLock { state in
            state.engineTask = nil
            state.data.removeAll()
            state.hopUploadBase = 0
            return state.cancelRequested
        }
        if cancelled {
            complete(withResponse: false, error: CourierError.cancelled(url: next.url), metrics: nil)
            return
        }
        if !prepareBodyForNextHop(next, previousMethod: previousMethod) {
            complete(withResponse: false, error: CourierError.requestBodyNotReplayable(url: next.url), metrics: nil)
            return
        }
        task.snapshot.withLock { snapshot in
            snapshot.currentRequest = next
            snapshot.countOfBytesReceived = 0
        }
        send(authorizedAheadOfTime(next))
    }

    /// Makes sure the body can be sent again: bytes and files replay; a stream comes from the
    /// need-new-body-stream block, else from the task's own factory (multipart forms). A
    /// redirect that changed the method (POST → GET) sends no body. False: nothing to send.
    private func prepareBodyForNextHop(_ next: URLRequest, previousMethod: String) -> Bool {
        guard let current = body.withLock({ $0 }) else { return true }
        if (next.httpMethod ?? "GET").uppercased() != previousMethod.uppercased() {
            body.withLock { $0 = nil }
            return true
        }
        if current.isReplayable { return true }
        let fresh = core.hooks.taskNeedNewBodyStream?(task) ?? bodyFactory?()
        guard let fresh else { return false }
        body.withLock { $0 = fresh }
        return true
    }

    // MARK: - Authentication

    /// The retry answering a 401, or nil to deliver it: every challenge of every
    /// `WWW-Authenticate` field is read, the strongest one Courier supports is offered to the
    /// challenge block, and the default handling answers with the session credential only in
    /// its scope and schemes (see ``AuthenticationAttempts`` and ``URLSessionManager/credential``).
    private func authenticationRetry(
        for request: URLRequest, head: HTTPResponseHead, response: () -> HTTPURLResponse?
    ) -> URLRequest? {
        let challenges = AuthenticationHeader.challenges(in: head.headers["www-authenticate"])
        let attempts = state.withLock { $0.authentication }
        guard !attempts.exhausted, let offered = ChallengeSelection.strongest(challenges) else { return nil }
        if let (stale, answer) = attempts.staleRetry(challenges, url: request.url) {
            return answered(request, challenge: stale, answer: answer, isStaleRetry: true)
        }
        var disposition = ChallengeDisposition.performDefaultHandling
        if let hook = core.hooks.taskDidReceiveChallenge {
            guard let failureResponse = response() else { return nil }
            let challenge = AuthenticationChallenge(
                scheme: offered.scheme,
                realm: offered.parameters["realm"],
                parameters: offered.parameters,
                previousFailureCount: attempts.failures,
                failureResponse: failureResponse
            )
            disposition = hook(task, challenge)
        }
        let credential: URLCredential?
        let chosen: AuthenticationHeader.Challenge?
        let isSessionCredential: Bool
        switch disposition {
        case .useCredential(let given):
            (credential, chosen, isSessionCredential) = (given, offered, false)
        case .performDefaultHandling:
            let allowed = ChallengeSelection.strongest(challenges, allowed: core.credentialSchemes)
            let applies = attempts.sessionCredentialApplies(
                originalURL: task.originalRequest?.url, url: request.url, realm: allowed?.parameters["realm"])
            (credential, chosen, isSessionCredential) = applies ? (core.credential, allowed, true) : (nil, nil, true)
        case .rejectProtectionSpace:
            return nil
        case .cancel:
            state.withLock { $0.cancelRequested = true }
            return nil
        }
        guard let credential, let chosen, let user = credential.user, let password = credential.password,
            let origin = CredentialScope.Origin(request.url)
        else { return nil }
        let answer = AuthenticationAttempts.Answer(
            scope: CredentialScope(origin: origin, realm: chosen.parameters["realm"]),
            isDigest: chosen.scheme.lowercased() == "digest", user: user, password: password,
            isSessionCredential: isSessionCredential)
        return answered(request, challenge: chosen, answer: answer, isStaleRetry: false)
    }

    /// `request` with the `Authorization` answering `challenge` with `answer`'s credential
    /// (recorded in the task's attempts), or nil when it can't be answered.
    private func answered(
        _ request: URLRequest, challenge: AuthenticationHeader.Challenge, answer: AuthenticationAttempts.Answer,
        isStaleRetry: Bool, aheadOfTime: Bool = false
    ) -> URLRequest? {
        let authorization: String?
        if answer.isDigest {
            guard let realm = challenge.parameters["realm"], let nonce = challenge.parameters["nonce"],
                let count = core.digestAuthenticator.nextCount(origin: answer.scope.origin, realm: realm, nonce: nonce)
            else { return nil }
            authorization = AuthenticationHeader.digest(
                challenge, user: answer.user, password: answer.password, method: request.httpMethod ?? "GET",
                uri: Self.requestTarget(of: request.url), nonceCount: count, clientNonce: AuthenticationHeader.makeClientNonce())
            if authorization != nil, answer.isSessionCredential {
                core.digestAuthenticator.remember(challenge, for: answer.scope.origin)
            }
        } else {
            authorization = AuthenticationHeader.basic(user: answer.user, password: answer.password)
        }
        guard let authorization else { return nil }
        state.withLock { $0.authentication.record(answer, stale: isStaleRetry, aheadOfTime: aheadOfTime) }
        var retry = request
        retry.setValue(authorization, forHTTPHeaderField: "Authorization")
        return retry
    }

    /// `request` answering ahead of time the Digest challenge the session credential last
    /// answered at its origin, so the nonce is reused with the next `nc`: only for a request
    /// without an `Authorization` of its own, to the origin of the task's original request,
    /// with Digest among the credential's schemes.
    private func authorizedAheadOfTime(_ request: URLRequest) -> URLRequest {
        guard request.value(forHTTPHeaderField: "Authorization") == nil,
            let origin = CredentialScope.Origin(request.url), origin == CredentialScope.Origin(task.originalRequest?.url),
            core.credentialSchemes.contains(.digest),
            let challenge = core.digestAuthenticator.challenge(for: origin),
            let credential = core.credential, let user = credential.user, let password = credential.password
        else { return request }
        let scope = CredentialScope(origin: origin, realm: challenge.parameters["realm"])
        let applies = state.withLock {
            $0.authentication.sessionCredentialApplies(
                originalURL: task.originalRequest?.url, url: request.url, realm: scope.realm)
        }
        guard applies else { return request }
        let answer = AuthenticationAttempts.Answer(
            scope: scope, isDigest: true, user: user, password: password, isSessionCredential: true)
        return answered(request, challenge: challenge, answer: answer, isStaleRetry: false, aheadOfTime: true) ?? request
    }

    private static func requestTarget(of url: URL?) -> String {
        guard let url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return "/" }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    // MARK: - Completion

    /// Ends the task once: `withResponse` says whether the last response head counts (not
    /// after a failed redirect or retry).
    private func complete(withResponse: Bool, error: (any Error)?, metrics: EngineMetrics?) {
        // One critical section: check, claim and take the gathered data together.
        let taken: (Data, DownloadSink?)? = state.withLock { state in
            guard !state.completed else { return nil }
            state.completed = true
            defer { state.data = Data(); state.engineTask = nil }
            return (state.data, state.download)
        }
        guard let (data, sink) = taken else { return }
        progress.finish()
        let work: @Sendable () -> Void = { [self] in
            // A head-only task (the `HTTPRequest` entry point) makes no `HTTPURLResponse` unless a
            // monitor or a download (AFN-shaped signatures) needs one.
            let needsResponse = withResponse
                && (!self.deliversHeadOnly || !self.core.monitors.isEmpty || self.state.withLock { $0.isDownload })
            self.finish(response: needsResponse ? self.task.response : nil, data: data, sink: sink, error: error)
        }
        if let finisher {
            finisher(work)
        } else {
            callbacks.async(work)  // after the task's last progress call
        }
    }

    /// Off the event loop: file move, serialization, completion, notification.
    private func finish(response: HTTPURLResponse?, data: Data, sink: DownloadSink?, error transportError: (any Error)?) {
        var object: (any Sendable)?
        var error = transportError
        let serializer = serializerOverride ?? core.responseSerializer
        var assetURL: URL?
        let (isDownload, alreadyComplete, resumeDataHandler) = state.withLock {
            ($0.isDownload, $0.alreadyComplete, $0.resumeDataHandler)
        }
        var producedResumeData: DownloadResumeData?
        if let sink {
            let written = sink.close()
            if transportError == nil, let written, let downloadTask = task as? DownloadTask, let response {
                assetURL = moveDownload(downloadTask, from: written, response: response)
            } else if let written {
                producedResumeData = partialDownload(at: written, sink: sink, response: response, keep: resumeDataHandler != nil || !Self.isCancellation(transportError))
            }
        } else if alreadyComplete, transportError == nil, let resumeData, let downloadTask = task as? DownloadTask, let response {
            assetURL = moveDownload(downloadTask, from: resumeData.partialFileURL, response: response)
        }
        if let producedResumeData { task.snapshot.withLock { $0.resumeData = producedResumeData } }
        resumeDataHandler?(producedResumeData)
        if transportError == nil, deliversHeadOnly, sink == nil, !isDownload {
            object = data  // the raw body: serializers take an HTTPURLResponse, this task makes none
        } else if transportError == nil {
            let result = serializer.serializeResponseErased(response, data: sink == nil && !isDownload ? data : nil)
            object = Self.unwrapOptional(result.object)
            error = alreadyComplete ? nil : result.error
            if isDownload { object = assetURL }
        }
        task.snapshot.withLock { snapshot in
            snapshot.state = .completed
            snapshot.error = error
        }
        let completion = completionHandler
        let finalAssetURL = assetURL
        let finalObject = object
        let finalError = error
        let deliver: @Sendable () -> Void = { [self] in
            // As in AFNetworking, the task leaves the manager before its completion runs.
            self.core.unregister(self.task)
            completion?(response, finalObject, finalError)
            self.core.taskCompleted(
                self.task, response: response, data: sink == nil ? data : nil, object: finalObject, error: finalError,
                serializer: serializer, assetURL: finalAssetURL)
        }
        if finisher != nil {
            deliver()  // the async shape: the completion only records the result
        } else {
            let group = core.completionGroup
            group.enter()
            core.completionQueue.async {
                deliver()
                group.leave()
            }
        }
    }

    /// A download that ended early: keeps the file and describes how to resume it when asked
    /// to (or when the transfer failed) and the server sent the resource itself (200 or 206)
    /// without a content coding (a decoded body's bytes are not the ranges' bytes); otherwise
    /// removes a temporary file. The caller's partial file is never removed.
    private func partialDownload(at file: URL, sink: DownloadSink, response: HTTPURLResponse?, keep: Bool) -> DownloadResumeData? {
        let contentCoded = ResumeResponseRule.isContentCoded(response?.value(forHTTPHeaderField: "Content-Encoding"))
        let usable = keep && !contentCoded && (response?.statusCode == 200 || response?.statusCode == 206)
        if usable, let response, sink.bytesWritten > 0 || sink.isCallersFile, let original = task.originalRequest {
            var request = resumeData?.request ?? original
            request.setValue(nil, forHTTPHeaderField: "Range")
            request.setValue(nil, forHTTPHeaderField: "If-Range")
            let validator = DownloadResumeData.validator(of: response) ?? resumeData?.validator
            let total = ResumeResponseRule.completeLength(
                status: response.statusCode, contentRange: response.value(forHTTPHeaderField: "Content-Range"),
                contentLength: response.value(forHTTPHeaderField: "Content-Length"), contentCoded: contentCoded)
            return DownloadResumeData(
                request: request, partialFileURL: file, validator: validator,
                allowsResumeWithoutValidator: resumeData?.allowsResumeWithoutValidator ?? false,
                totalLength: total ?? resumeData?.totalLength)
        }
        if !sink.isCallersFile { try? FileManager.default.removeItem(at: file) }
        return nil
    }

    private static func isCancellation(_ error: (any Error)?) -> Bool {
        if case .cancelled = error as? CourierError { return true }
        return false
    }

    private func moveDownload(_ downloadTask: DownloadTask, from temporary: URL, response: HTTPURLResponse) -> URL? {
        var destination: URL?
        if let hook = core.hooks.downloadTaskDidFinishDownloading {
            destination = hook(downloadTask, temporary)  // the manager-level block wins
        }
        if destination == nil, case .download(let taskDestination) = kind, let taskDestination {
            destination = taskDestination(temporary, response)
        }
        guard let destination else { return temporary }
        if destination.standardizedFileURL.path == temporary.standardizedFileURL.path {
            core.downloadMoved(downloadTask, to: destination)  // resumed in place: nothing to move
            return destination
        }
        // Only a regular file is replaced (atomically, by rename); a directory, a symbolic link or
        // anything else at the destination is an error and nothing is deleted.
        do {
            try DownloadFileSystem.replace(destination, with: temporary)
            core.downloadMoved(downloadTask, to: destination)
            return destination
        } catch {
            let failure = error as? CourierError
                ?? CourierError.cannotMoveDownloadedFile(from: temporary, to: destination, reason: "\(error)")
            core.downloadMoveFailed(downloadTask, error: failure)
            return temporary
        }
    }

    /// `Optional<T>.none` boxed in `any Sendable` becomes a real nil (an `Optional.some`
    /// stays boxed; casting it with `as?` sees through it).
    static func unwrapOptional(_ value: (any Sendable)?) -> (any Sendable)? {
        guard let value else { return nil }
        if let optional = value as? any OptionalProtocol, optional.courierIsNil { return nil }
        return value
    }

}

/// Lets `unwrapOptional` see through `Optional` without knowing its wrapped type.
protocol OptionalProtocol {
    var courierIsNil: Bool { get }
}

extension Optional: OptionalProtocol {
    var courierIsNil: Bool {
        if case .none = self { return true }
        if case .some(let wrapped) = self, let inner = wrapped as? any OptionalProtocol { return inner.courierIsNil }
        return false
    }
}
