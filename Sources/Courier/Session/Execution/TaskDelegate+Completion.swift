import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The end of a task run by a ``TaskDelegate``: claimed once, then, off the event loop, the
/// download's file move, the serializer, the completion handler and the notification.
extension TaskDelegate {
    /// Ends the task once: `withResponse` says whether the last response head counts (not
    /// after a failed redirect or retry). `onCallbackQueue`: called while the task's callback
    /// queue handles an engine event, so nothing of the task's is queued before it.
    func complete(withResponse: Bool, error: (any Error)?, metrics: EngineMetrics?, onCallbackQueue: Bool = false) {
        // One critical section: check, claim and take the gathered data together.
        let taken: (Data, DownloadSink?)? = run.withLock { run in
            guard run.machine.claimCompletion() else { return nil }
            defer { run.data = Data(); run.engineTask = nil }
            return (run.data, run.download)
        }
        guard let (data, sink) = taken else { return }
        progress.finish()
        guard monitored.load(ordering: .relaxed) || toldMonitors.load(ordering: .acquiring) else {
            let work: @Sendable () -> Void = { [self] in
                self.finish(hasResponse: withResponse, data: data, sink: sink, error: error, monitorCalls: [])
            }
            if let finisher { finisher(work) } else { callbacks.async(work) }  // after the task's last progress call
            return
        }
        let work: @Sendable ([TaskCallbackQueue.MonitorCalls]) -> Void = { [self] monitorCalls in
            self.finish(hasResponse: withResponse, data: data, sink: sink, error: error, monitorCalls: monitorCalls)
        }
        // With monitors, the end comes after the task's monitor calls so far: those still waiting
        // are made first thing where it finishes, and those already on the monitor queue before
        // it (then the end starts from there). So `callEnd` and `taskDidComplete` (in `finish`)
        // come last, and an awaited call returns only after its monitors heard it all.
        let end: @Sendable () -> Void = { [self] in
            let (waiting, queued) = callbacks.takeMonitorCalls()
            let finishing: @Sendable () -> Void
            if let finisher {
                finishing = { finisher { work(waiting) } }
            } else {
                finishing = { self.callbacks.async { work(waiting) } }
            }
            if queued { callbacks.afterQueuedMonitorCalls(finishing) } else { finishing() }
        }
        // Outside the callback queue (a cancellation, a failed adapt): after what it holds.
        if onCallbackQueue { end() } else { callbacks.async(end) }
    }

    /// Off the event loop: file move, serialization, completion, notification. `hasResponse`:
    /// the last response head counts (see ``complete(withResponse:error:metrics:)``).
    ///
    /// The `HTTPURLResponse` (~10 µs on Linux) is made only for what hands it out: a completion
    /// that reads it, a monitor, a download (destination block, resume data), or a serializer
    /// that can't read the head (``InputSerializing``). A task that keeps the engine head (the `HTTPRequest`
    /// entry point) makes none unless a monitor or a download needs one.
    private func finish(
        hasResponse: Bool, data: Data, sink: DownloadSink?, error transportError: (any Error)?, monitorCalls: [TaskCallbackQueue.MonitorCalls]
    ) {
        for calls in monitorCalls { calls() }  // the task's monitor calls not made yet, first
        var object: (any Sendable)?
        var error = transportError
        // The manager's settings this end needs, read together.
        let (managerSerializer, completionQueue, completionGroup, hasMonitors) = environment.settings.withLock {
            ($0.responseSerializer, $0.completionQueue, $0.completionGroup, !$0.monitors.isEmpty)
        }
        let serializer = serializerOverride ?? managerSerializer
        var assetURL: URL?
        let (isDownload, alreadyComplete, resumeDataHandler) = run.withLock {
            ($0.machine.isDownload, $0.machine.downloadFile == .alreadyComplete, $0.resumeDataHandler)
        }
        let completionNeedsResponse = completionHandler != nil && completionReadsResponse && !keepsEngineHead
        var response: HTTPURLResponse? =
            hasResponse && (completionNeedsResponse || hasMonitors || isDownload || alreadyComplete || sink != nil) ? task.response : nil
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
        if let producedResumeData { snapshot.withLock { $0.resumeData = producedResumeData } }
        resumeDataHandler?(producedResumeData)
        if transportError == nil, keepsEngineHead, sink == nil, !isDownload {
            object = data  // the raw body: serializers take an HTTPURLResponse, this task makes none
        } else if transportError == nil {
            let body = sink == nil && !isDownload ? data : nil
            let serialized: (object: (any Sendable)?, error: CourierError?)
            if let builtIn = serializer as? any InputSerializing {
                // The response if one was made, else the head (whose input makes the task's
                // response only if asked: for an error, or a Content-Type only Foundation reads exactly).
                var input = response.map(SerializerInput.init)
                if input == nil, hasResponse { input = headInput() }
                serialized = builtIn.serializeForTask(input, data: body)
            } else {
                if hasResponse, response == nil { response = task.response }
                serialized = serializer.serializeForCompletion(response, data: body)
            }
            object = serialized.object
            error = alreadyComplete ? nil : serialized.error
            if isDownload { object = assetURL }
        }
        let finalState = error
        run.withLock { run in
            run.machine.finished()
            snapshot.withLock { snapshot in
                snapshot.state = run.machine.lifecycle
                snapshot.error = finalState
            }
        }
        eventsCallEnded(error: error)
        let completion = completionHandler
        let finalAssetURL = assetURL
        let finalObject = object
        let finalError = error
        let finalResponse = response
        let deliver: @Sendable () -> Void = { [self] in
            // As in AFNetworking, the task leaves the manager before its completion runs.
            self.environment.registry.unregister(self.task)
            if let observation = self.observation {
                let task = self.task
                observation.taskFinished(
                    method: task.originalRequest?.httpMethod ?? "GET", url: task.currentRequest?.url ?? task.originalRequest?.url,
                    response: finalResponse ?? task.response, error: finalError, retries: task.retryCount)
            }
            completion?(finalResponse, finalObject, finalError)
            self.environment.taskCompleted(
                self.task, response: finalResponse, data: sink == nil ? data : nil, object: finalObject, error: finalError,
                serializer: serializer, assetURL: finalAssetURL, outbox: self.outbox)
        }
        if finisher != nil {
            deliver()  // the async shape: the completion only records the result
        } else {
            let group = completionGroup
            group.enter()
            completionQueue.async {
                deliver()
                group.leave()
            }
        }
    }

    /// What a serializer reads of the task's final response head, with the task's own
    /// (memoized) `HTTPURLResponse` made only if asked; nil when there is no head.
    private func headInput() -> SerializerInput? {
        let (head, hasURL) = snapshot.withLock { ($0.head, $0.responseURL != nil) }
        guard let head, hasURL else { return nil }
        let snapshot = self.snapshot
        return SessionBridge.serializerInput(head, response: { snapshot.withLock { $0.madeResponse() } })
    }

    private static func isCancellation(_ error: (any Error)?) -> Bool {
        if case .cancelled = error as? CourierError { return true }
        return false
    }
}
