import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import Synchronization

/// The session's side of ``RequestInterceptor``: adapting each attempt's request before it is
/// sent, and, when an attempt ends badly, asking whether to send it again. A retry is a new
/// exchange, like a redirect hop: the attempt's response and gathered body are dropped, the
/// body is made ready to send again (``BodyReplayRule``; a body that can't be replayed is never
/// retried: the attempt's outcome stands), ``SessionTask/retryCount`` goes up, monitors hear
/// ``SessionEventMonitor/task(_:willRetry:after:dueTo:)``, and after the delay the request is
/// adapted again and sent. Every attempt reports its own metrics.
///
/// A task with no interceptor (neither the manager's nor its own) never comes here past one
/// nil check: its first request is sent at once, as before. Adapting and retrying run in a
/// Swift task of their own, never on an event loop.
extension TaskDelegate {
    /// Sends the task's first request: adapted first when an interceptor applies. The manager's
    /// interceptor is read here, once per task, and chained before the task's own.
    func startFirstAttempt(_ request: URLRequest) {
        let managerInterceptor = environment.settings.withLock { $0.interceptor }
        let interceptor: (any RequestInterceptor)? = snapshot.withLock { snapshot in
            switch (managerInterceptor, snapshot.interceptor) {
            case (nil, nil): return nil
            case (let manager?, nil): snapshot.interceptor = manager
            case (nil, let own?): snapshot.interceptor = own
            case (let manager?, let own?): snapshot.interceptor = Interceptor([manager, own])
            }
            return snapshot.interceptor
        }
        guard let interceptor else {
            send(authorizedAheadOfTime(request))
            return
        }
        adaptAndSend(request, with: interceptor)
    }

    /// Adapts `request` and sends the result; an adapt error fails the task with that error.
    private func adaptAndSend(_ request: URLRequest, with interceptor: any RequestInterceptor) {
        let task = self.task
        Task {
            var adapted: URLRequest
            do {
                adapted = try await interceptor.adapt(request, for: task)
            } catch {
                self.complete(withResponse: false, error: error, metrics: nil)
                return
            }
            // Cancelled while adapting: the cancellation already completed the task (this
            // completion is then a no-op; it only makes sure the task never hangs).
            guard self.run.withLock({ !$0.machine.cancelRequested && !$0.machine.completed }) else {
                self.complete(withResponse: false, error: CourierError.cancelled(url: request.url), metrics: nil)
                return
            }
            // A retry starts from the last request sent, which may hold the session's answer to
            // a challenge: it stays in its origin (an adapted retry elsewhere, say a mirror, gets
            // none; that origin's own 401 is answered by the credential's scope rules).
            if let answered = self.run.withLock({ $0.answeredAuthorization }),
                adapted.value(forHTTPHeaderField: "Authorization") == answered.value,
                CredentialScope.Origin(adapted.url) != answered.origin
            {
                adapted.setValue(nil, forHTTPHeaderField: "Authorization")
            }
            // A retry that a redirect took out of the origin the last attempt was adapted for
            // (the server's choice, not the interceptor's) carries no credential header while it
            // stays out of it, whoever added it: as on the redirect hop itself (RedirectRule).
            let origin = CredentialScope.Origin(adapted.url)
            let trusted = self.run.withLock { $0.adaptedOrigin }
            if let trusted, origin != trusted, CredentialScope.Origin(request.url) != trusted {
                for name in RedirectRule.crossOriginSensitiveHeaders { adapted.setValue(nil, forHTTPHeaderField: name) }
            } else {
                self.run.withLock { $0.adaptedOrigin = origin }
            }
            if adapted.httpBody != request.httpBody {
                self.run.withLock { $0.body = adapted.httpBody.map { RequestBody.data($0) } }
            }
            self.snapshot.withLock { $0.currentRequest = adapted }
            self.send(self.authorizedAheadOfTime(adapted))
        }
    }

    /// Called where an exchange's end would complete the task. True: the interceptor was asked
    /// and now owns the ending (it completes the task, or sends it again). False: no
    /// interceptor, or nothing to ask about (success, cancellation): complete as usual.
    func interceptEnding(withResponse: Bool, ending: TaskStateMachine.Ending?, metrics: EngineMetrics) -> Bool {
        guard let interceptor = snapshot.withLock({ $0.interceptor }) else { return false }
        // A task cancelled, or failed by the session itself, ends as it is.
        guard !run.withLock({ $0.machine.cancelRequested }) else { return false }
        let status = withResponse ? snapshot.withLock { $0.head.map { Int($0.status.code) } } : nil
        let attemptError: CourierError?
        switch ending {
        case .cancelled?: return false
        case .error(let error)?: attemptError = error
        case .engine(let error)?:
            if case .cancelled = error { return false }
            attemptError = reportedError(.engine(error), metrics: metrics)
        case nil: attemptError = nil
        }
        let response = status != nil ? task.response : nil
        if response != nil, !canReplayAfterResponse { return false }
        let askedError: any Error
        if let attemptError {
            askedError = attemptError
        } else if let response, let status, !(200..<400).contains(status) {
            askedError = CourierError.unacceptableStatusCode(response: response, data: run.withLock { $0.data }, underlying: nil)
        } else {
            return false
        }
        let task = self.task
        let decisionTask = Task {
            let decision = await interceptor.retry(task, dueTo: askedError, response: response)
            guard let delay = decision.retryDelay else {
                self.reportEvent(.decision(.retryDeclined(reason: askedError.localizedDescription)))
                var error: (any Error)? = attemptError
                if case .doNotRetryWithError(let replacement) = decision { error = replacement }
                self.complete(withResponse: withResponse, error: error, metrics: metrics)
                return
            }
            await self.retry(after: delay, dueTo: askedError, interceptor: interceptor) {
                self.complete(withResponse: withResponse, error: attemptError, metrics: metrics)
            }
        }
        // Cancelling the task cancels the decision (a cancel that came first: now).
        let cancelled = run.withLock { run in
            run.retryDecision = decisionTask
            return run.machine.cancelRequested
        }
        if cancelled { decisionTask.cancel() }
        return true
    }

    /// Whether the attempt's response has not gone anywhere it can't be taken back from: a
    /// stream already has its head. A download's body went to a temporary file of its own,
    /// which a retry drops; but not when it went to the caller's partial file (a resumed
    /// download, whose earlier bytes it may have changed), or when a resumed download was
    /// already complete (416: a success).
    private var canReplayAfterResponse: Bool {
        if case .stream = kind { return false }
        return run.withLock { run in
            guard run.machine.isDownload else { return true }
            if run.machine.downloadFile == .alreadyComplete { return false }
            return run.download?.isCallersFile != true
        }
    }

    /// Sends the task again after `delay` seconds, or, when its body can't be sent again,
    /// lets the attempt's outcome stand (`giveUp`).
    private func retry(
        after delay: TimeInterval, dueTo error: any Error, interceptor: any RequestInterceptor, giveUp: @Sendable () -> Void
    ) async {
        guard let request = task.currentRequest else { return giveUp() }
        guard prepareBodyForNextHop(request, previousMethod: request.httpMethod ?? "GET") else { return giveUp() }
        tellEach(environment.monitors) { $0.task($1, willRetry: request, after: delay, dueTo: error) }
        reportEvent(.decision(.retryDecided(delay: delay, reason: error.localizedDescription)))
        observation?.willRetry(after: delay, dueTo: error)
        // Never past the task's deadline: the retry then ends at once with the deadline timeout.
        let deadline = run.withLock { $0.deadline }
        let wait = deadline.map { $0.boundedDelay(delay, at: .now()) } ?? delay
        if wait > 0 {
            // A delay too long for Duration waits a day (RetryRule caps its own far lower).
            try? await Task.sleep(for: .seconds(min(wait, RetryRule.maximumBackoff)))
        }
        // Cancelled during the decision or the delay: the cancellation completed the task, and
        // giving up is a no-op (it only makes sure the task never hangs).
        let proceed: (retry: Bool, droppedFile: DownloadSink?) = run.withLock { run in
            guard run.machine.retryDecided() else { return (false, nil) }
            run.data.removeAll()
            run.engineTask = nil
            run.cachedExchange = nil
            defer { run.download = nil }
            return (true, run.download)
        }
        guard proceed.retry else { return giveUp() }
        // The attempt's download file (its error body) never reaches the destination: closed
        // once its writes are done, and removed (a temporary file: the caller's is never retried).
        if let dropped = proceed.droppedFile, let file = dropped.close(), !dropped.isCallersFile {
            try? FileManager.default.removeItem(at: file)
        }
        snapshot.withLock { snapshot in
            snapshot.retryCount += 1
            snapshot.head = nil
            snapshot.responseURL = nil
            snapshot.response = nil
            snapshot.countOfBytesReceived = 0
            snapshot.countOfBytesExpectedToReceive = -1
            snapshot.countOfBytesSent = 0  // the engine counts the body again from 0
        }
        adaptAndSend(request, with: interceptor)
    }
}
