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
    }

    /// What to do with the exchange in flight once it ends.
    private enum Continuation {
        case deliver
        case follow(URLRequest)
        case authenticate(URLRequest)
    }

    private struct State {
        var started = false
        var completed = false
        var engineTask: EngineTask?
        var data = Data()
        var continuation: Continuation = .deliver
        var redirects = 0
        var authenticationAttempts = 0
        var lastStatus: Int?
        var download: DownloadSink?
        var cancelRequested = false
        var hopUploadBase: Int64 = 0
    }

    let kind: Kind
    let task: SessionTask
    /// The two `Progress` objects, made on first use (most tasks never ask: Foundation's
    /// `Progress` is costly enough to show in small-request throughput).
    private let progressObjects = Mutex<(upload: Progress?, download: Progress?)>((nil, nil))
    /// Totals and completed counts behind the progress objects: (upload total, download total).
    private let progressTotals = Mutex<(upload: Int64, download: Int64)>((-1, -1))

    private let body: RequestBody?
    private let uploadProgressHandler: (@Sendable (Progress) -> Void)?
    private let downloadProgressHandler: (@Sendable (Progress) -> Void)?
    private let completionHandler: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)?
    private let core: URLSessionManager
    private let state = Mutex(State())
    /// A serializer for this task only (the async typed API), instead of the manager's.
    let serializerOverride: (any ResponseSerializer)?

    private enum Direction { case upload, download }

    /// The upload progress (total from the expected counts; when unknown, the request's
    /// Content-Length).
    var uploadProgress: Progress { progress(.upload) }

    /// The download progress.
    var downloadProgress: Progress { progress(.download) }

    /// The progress object for `direction`, made on first use from the current counts.
    private func progress(_ direction: Direction) -> Progress {
        let totals = progressTotals.withLock { $0 }
        let completed = direction == .upload ? task.countOfBytesSent : task.countOfBytesReceived
        return progressObjects.withLock { objects in
            if let existing = direction == .upload ? objects.upload : objects.download { return existing }
            let progress = Progress(totalUnitCount: direction == .upload ? totals.upload : totals.download)
            progress.completedUnitCount = completed
            if direction == .upload { objects.upload = progress } else { objects.download = progress }
            return progress
        }
    }

    /// Records a new total (upload: only the first known one) and, when the progress object
    /// exists or someone listens, brings it up to date and returns it.
    private func updateProgress(_ direction: Direction, total: Int64?, completed: Int64) -> Progress? {
        if let total {
            progressTotals.withLock { totals in
                switch direction {
                case .upload: if totals.upload < 0 { totals.upload = total }
                case .download: totals.download = total
                }
            }
        }
        let handler = direction == .upload ? uploadProgressHandler : downloadProgressHandler
        let exists = progressObjects.withLock { (direction == .upload ? $0.upload : $0.download) != nil }
        guard exists || handler != nil else { return nil }
        let progress = progress(direction)
        let totals = progressTotals.withLock { $0 }
        let currentTotal = direction == .upload ? totals.upload : totals.download
        if progress.totalUnitCount != currentTotal { progress.totalUnitCount = currentTotal }
        progress.completedUnitCount = completed
        return progress
    }

    init(
        kind: Kind,
        task: SessionTask,
        body: RequestBody?,
        core: URLSessionManager,
        uploadProgress: (@Sendable (Progress) -> Void)?,
        downloadProgress: (@Sendable (Progress) -> Void)?,
        completion: (@Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void)?,
        serializer: (any ResponseSerializer)? = nil
    ) {
        self.serializerOverride = serializer
        self.kind = kind
        self.task = task
        self.body = body
        self.core = core
        self.uploadProgressHandler = uploadProgress
        self.downloadProgressHandler = downloadProgress
        self.completionHandler = completion
        if let length = body?.expectedLength {
            task.snapshot.withLock { $0.countOfBytesExpectedToSend = length }
            progressTotals.withLock { $0.upload = length }
        } else if let header = task.originalRequest?.value(forHTTPHeaderField: "Content-Length"), let length = Int64(header) {
            // AFN: an unknown upload size falls back to the request's Content-Length.
            progressTotals.withLock { $0.upload = length }
        }
    }

    // MARK: - Control

    func resume() {
        enum Step { case start(URLRequest), unpause(EngineTask?), nothing }
        let step: Step = task.snapshot.withLock { snapshot in
            guard snapshot.state == .suspended else { return .nothing }
            snapshot.state = .running
            let current = snapshot.currentRequest
            return state.withLock { state in
                if state.started { return .unpause(state.engineTask) }
                state.started = true
                return current.map { .start($0) } ?? .nothing
            }
        }
        switch step {
        case .start(let request):
            core.taskDidResume(task)
            send(request)
        case .unpause(let engineTask):
            core.taskDidResume(task)
            engineTask?.resume()
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
            complete(response: nil, error: CourierError.cancelled(url: task.originalRequest?.url), metrics: nil)
        }
    }

    // MARK: - Sending

    private func send(_ request: URLRequest) {
        let engineRequest: EngineRequest
        do {
            engineRequest = try core.engineRequest(for: request, body: body)
        } catch {
            complete(response: nil, error: error, metrics: nil)
            return
        }
        if case .download = kind {
            do {
                let sink = try DownloadSink()
                state.withLock { $0.download = sink }
            } catch {
                complete(response: nil, error: error, metrics: nil)
                return
            }
        }
        let engineTask = core.engine.execute(engineRequest) { [self] event in
            self.handle(event)
        }
        let cancelNow = state.withLock { state in
            state.engineTask = engineTask
            return state.cancelRequested
        }
        if cancelNow { engineTask.cancel() }
        if task.state == .suspended { engineTask.pause() }
    }

    // MARK: - Engine events (on the event loop)

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
            if let progress = updateProgress(.upload, total: expected.map { base + $0 }, completed: total) {
                uploadProgressHandler?(progress)
            }
            let expectedForHook = expected.map { base + $0 } ?? progressTotals.withLock { $0.upload }
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
        guard let request = task.currentRequest, let url = request.url,
            let response = Self.makeResponse(head, url: url)
        else { return }
        let status = Int(head.status.code)
        state.withLock { $0.lastStatus = status }

        // Redirects are the session's job, not the engine's.
        if RedirectRule.redirectStatusCodes.contains(status), let location = head.headers.first(name: "location"),
            core.configuration.maximumRedirects > 0,
            let proposed = RedirectRule.redirectedRequest(from: request, statusCode: status, location: location)
        {
            let next: URLRequest?
            if let hook = core.hooks.taskWillPerformHTTPRedirection {
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
        if status == 401, let retry = authenticationRetry(for: request, response: response, head: head) {
            state.withLock { $0.continuation = .authenticate(retry) }
            return
        }

        task.snapshot.withLock { snapshot in
            snapshot.response = response
            snapshot.countOfBytesExpectedToReceive = response.expectedContentLength
        }
        _ = updateProgress(.download, total: response.expectedContentLength, completed: 0)
        if let dataTask = task as? DataTask, let hook = core.hooks.dataTaskDidReceiveResponse {
            if case .cancel = hook(dataTask, response) {
                cancel()
            }
        }
    }

    private func handleBody(_ buffer: ByteBuffer) {
        let (continuation, sink): (Continuation, DownloadSink?) = state.withLock { ($0.continuation, $0.download) }
        guard case .deliver = continuation else { return }  // a redirect or 401 body: discarded
        let received = task.snapshot.withLock { snapshot in
            snapshot.countOfBytesReceived += Int64(buffer.readableBytes)
            return snapshot.countOfBytesReceived
        }
        if let sink {
            let engineTask = state.withLock { $0.engineTask }
            sink.write(buffer, backpressure: engineTask)
            if let downloadTask = task as? DownloadTask {
                core.hooks.downloadTaskDidWriteData?(
                    downloadTask, Int64(buffer.readableBytes), received, task.countOfBytesExpectedToReceive)
            }
        } else {
            let chunk = Data(buffer.readableBytesView)
            state.withLock { $0.data.append(chunk) }
            if let dataTask = task as? DataTask { core.hooks.dataTaskDidReceiveData?(dataTask, chunk) }
        }
        if let progress = updateProgress(.download, total: nil, completed: received) {
            downloadProgressHandler?(progress)
        }
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
            let cancelled = state.withLock { $0.cancelRequested }
            complete(response: task.response, error: cancelled ? CourierError.cancelled(url: task.currentRequest?.url) : core.courierError(error, url: task.currentRequest?.url), metrics: metrics)
            return
        }
        switch continuation {
        case .deliver:
            complete(response: task.response, error: nil, metrics: metrics)
        case .follow(let next):
            let count = state.withLock { state in
                state.redirects += 1
                return state.redirects
            }
            if count > core.configuration.maximumRedirects {
                complete(response: nil, error: CourierError.tooManyRedirects(url: next.url, limit: core.configuration.maximumRedirects), metrics: metrics)
                return
            }
            startNextHop(next)
        case .authenticate(let next):
            startNextHop(next)
        }
    }

    private func startNextHop(_ next: URLRequest) {
        let cancelled = state.withLock { state in
            state.engineTask = nil
            state.data.removeAll()
            state.hopUploadBase = 0
            return state.cancelRequested
        }
        if cancelled {
            complete(response: nil, error: CourierError.cancelled(url: next.url), metrics: nil)
            return
        }
        task.snapshot.withLock { snapshot in
            snapshot.currentRequest = next
            snapshot.countOfBytesReceived = 0
        }
        send(next)
    }

    // MARK: - Authentication

    private func authenticationRetry(for request: URLRequest, response: HTTPURLResponse, head: HTTPResponseHead) -> URLRequest? {
        guard let header = head.headers.first(name: "www-authenticate"),
            let parsed = AuthenticationHeader.parse(header)
        else { return nil }
        let attempts = state.withLock { $0.authenticationAttempts }
        let challenge = AuthenticationChallenge(
            scheme: parsed.scheme,
            realm: parsed.parameters["realm"],
            parameters: parsed.parameters,
            previousFailureCount: attempts,
            failureResponse: response
        )
        let disposition = core.hooks.taskDidReceiveChallenge?(task, challenge) ?? .performDefaultHandling
        let credential: URLCredential?
        switch disposition {
        case .useCredential(let given): credential = given
        case .performDefaultHandling: credential = attempts == 0 ? core.credential : nil
        case .rejectProtectionSpace: credential = nil
        case .cancel:
            state.withLock { $0.cancelRequested = true }
            return nil
        }
        guard let credential, let user = credential.user, let password = credential.password,
            let authorization = AuthenticationHeader.authorization(
                for: parsed, user: user, password: password,
                method: request.httpMethod ?? "GET", uri: Self.requestTarget(of: request.url)
            )
        else { return nil }
        state.withLock { $0.authenticationAttempts += 1 }
        var retry = request
        retry.setValue(authorization, forHTTPHeaderField: "Authorization")
        return retry
    }

    private static func requestTarget(of url: URL?) -> String {
        guard let url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return "/" }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    // MARK: - Completion

    private func complete(response: HTTPURLResponse?, error: (any Error)?, metrics: EngineMetrics?) {
        // One critical section: check, claim and take the gathered data together.
        let taken: (Data, DownloadSink?)? = state.withLock { state in
            guard !state.completed else { return nil }
            state.completed = true
            defer { state.data = Data(); state.engineTask = nil }
            return (state.data, state.download)
        }
        guard let (data, sink) = taken else { return }
        core.processingQueue.async { [self] in
            self.finish(response: response, data: data, sink: sink, error: error)
        }
    }

    /// Off the event loop: file move, serialization, completion, notification.
    private func finish(response: HTTPURLResponse?, data: Data, sink: DownloadSink?, error transportError: (any Error)?) {
        var object: (any Sendable)?
        var error = transportError
        let serializer = serializerOverride ?? core.responseSerializer
        var assetURL: URL?
        if let sink {
            let temporary = sink.close()
            if transportError == nil, let temporary, let downloadTask = task as? DownloadTask, let response {
                assetURL = moveDownload(downloadTask, from: temporary, response: response)
            } else if let temporary {
                try? FileManager.default.removeItem(at: temporary)
            }
        }
        if transportError == nil {
            let result = serializer.serializeResponseErased(response, data: sink == nil ? data : nil)
            object = Self.unwrapOptional(result.object)
            error = result.error
            if case .download = kind { object = assetURL }
        }
        task.snapshot.withLock { snapshot in
            snapshot.state = .completed
            snapshot.error = error
        }
        let completion = completionHandler
        let finalAssetURL = assetURL
        let finalObject = object
        let finalError = error
        core.completionGroup.enter()
        core.completionQueue.async { [self] in
            // As in AFNetworking, the task leaves the manager before its completion runs.
            self.core.unregister(self.task)
            completion?(response, finalObject, finalError)
            self.core.taskCompleted(
                self.task, response: response, data: sink == nil ? data : nil, object: finalObject, error: finalError,
                serializer: serializer, assetURL: finalAssetURL)
            self.core.completionGroup.leave()
        }
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
        do {
            if FileManager.default.fileExists(atPath: destination.path) {
                try FileManager.default.removeItem(at: destination)
            }
            try FileManager.default.moveItem(at: temporary, to: destination)
            core.downloadMoved(downloadTask, to: destination)
            return destination
        } catch {
            let failure = CourierError.cannotMoveDownloadedFile(from: temporary, to: destination, reason: "\(error)")
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

    static func makeResponse(_ head: HTTPResponseHead, url: URL) -> HTTPURLResponse? {
        var fields: [String: String] = [:]
        for (name, value) in head.headers {
            if let existing = fields[name] {
                fields[name] = existing + ", " + value
            } else {
                fields[name] = value
            }
        }
        let version = "HTTP/\(head.version.major).\(head.version.minor)"
        return HTTPURLResponse(url: url, statusCode: Int(head.status.code), httpVersion: version, headerFields: fields)
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
