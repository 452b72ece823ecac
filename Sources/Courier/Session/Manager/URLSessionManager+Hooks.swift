public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// AFNetworking's manager-level blocks, one per session delegate callback (AFN §1.1 "Block
/// hooks"). Each replaces the previous block; nil removes it. A task's blocks run on the task's
/// own serial queue, in event order and before its completion, never on an event loop (the
/// did-complete block runs on the completion queue, after the completion handler).
extension URLSessionManager {
    /// Called once the session is invalidated (after its tasks ended).
    public func setSessionDidBecomeInvalidBlock(_ block: (@Sendable (URLSessionManager, (any Error)?) -> Void)?) {
        updateHooks { $0.sessionDidBecomeInvalid = block }
    }

    /// Answers a task's HTTP authentication challenge (401 with Basic or Digest). Without it
    /// the manager's ``credential`` answers once.
    public func setTaskDidReceiveAuthenticationChallengeBlock(
        _ block: (@Sendable (SessionTask, AuthenticationChallenge) -> ChallengeDisposition)?
    ) {
        updateHooks { $0.taskDidReceiveChallenge = block }
    }

    /// Decides each redirect: return the proposed request, a modified one, or nil to stop and
    /// deliver the 3xx response.
    public func setTaskWillPerformHTTPRedirectionBlock(
        _ block: (@Sendable (SessionTask, HTTPURLResponse, URLRequest) -> URLRequest?)?
    ) {
        updateHooks { $0.taskWillPerformHTTPRedirection = block }
    }

    /// Provides a fresh body when a streamed request must be sent again.
    public func setTaskNeedNewBodyStreamBlock(_ block: (@Sendable (SessionTask) -> RequestBody?)?) {
        updateHooks { $0.taskNeedNewBodyStream = block }
    }

    /// Called as body bytes go out: (task, bytes just sent, total sent, total expected — the
    /// request's Content-Length when the size is otherwise unknown).
    public func setTaskDidSendBodyDataBlock(_ block: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)?) {
        updateHooks { $0.taskDidSendBodyData = block }
    }

    /// Called after a task's completion handler, with its error.
    public func setTaskDidCompleteBlock(_ block: (@Sendable (SessionTask, (any Error)?) -> Void)?) {
        updateHooks { $0.taskDidComplete = block }
    }

    /// Called with each exchange's metrics.
    public func setTaskDidFinishCollectingMetricsBlock(_ block: (@Sendable (SessionTask, EngineMetrics) -> Void)?) {
        updateHooks { $0.taskDidFinishCollectingMetrics = block }
    }

    /// Decides what a data task does with its response: allow (default), cancel, or become a
    /// download task.
    public func setDataTaskDidReceiveResponseBlock(
        _ block: (@Sendable (DataTask, HTTPURLResponse) -> ResponseDisposition)?
    ) {
        updateHooks { $0.dataTaskDidReceiveResponse = block }
    }

    /// Called with each chunk of a data task's body (also gathered for the completion).
    public func setDataTaskDidReceiveDataBlock(_ block: (@Sendable (DataTask, Data) -> Void)?) {
        updateHooks { $0.dataTaskDidReceiveData = block }
    }

    /// Called when a data task became a download task (its response block answered
    /// ``ResponseDisposition/becomeDownload``): (the data task, the download task replacing it).
    public func setDataTaskDidBecomeDownloadTaskBlock(_ block: (@Sendable (DataTask, DownloadTask) -> Void)?) {
        updateHooks { $0.dataTaskDidBecomeDownloadTask = block }
    }

    /// Chooses where finished downloads go. It wins over a task's own destination; returning
    /// nil falls back to it.
    public func setDownloadTaskDidFinishDownloadingBlock(_ block: (@Sendable (DownloadTask, URL) -> URL?)?) {
        updateHooks { $0.downloadTaskDidFinishDownloading = block }
    }

    /// Called as download bytes are written: (task, just written, total written, expected).
    public func setDownloadTaskDidWriteDataBlock(_ block: (@Sendable (DownloadTask, Int64, Int64, Int64) -> Void)?) {
        updateHooks { $0.downloadTaskDidWriteData = block }
    }

    /// Called when a download resumes at an offset: (task, offset, expected total).
    public func setDownloadTaskDidResumeBlock(_ block: (@Sendable (DownloadTask, Int64, Int64) -> Void)?) {
        updateHooks { $0.downloadTaskDidResume = block }
    }
}
