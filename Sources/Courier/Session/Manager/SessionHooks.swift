import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a data task does with a response it has just received (AFN's
/// `NSURLSessionResponseDisposition`).
public enum ResponseDisposition: Sendable {
    /// Go on receiving the body. The default.
    case allow
    /// Cancel the task.
    case cancel
    /// Write the rest of the body to a file: a ``DownloadTask`` takes the data task's place
    /// (the data-task-did-become-download-task block receives both), and the completion
    /// receives the file's URL. The manager's download-did-finish block picks where it goes.
    case becomeDownload
}

/// The manager-level blocks of AFNetworking's table, one per session delegate callback. All
/// optional; set them through the manager's `set...` methods. A task's blocks run on that
/// task's own serial queue, in the order of its events, never on an event loop: a slow block
/// holds up only its own task. Different tasks' blocks run concurrently: make them thread-safe.
struct SessionHooks: Sendable {
    var sessionDidBecomeInvalid: (@Sendable (URLSessionManager, (any Error)?) -> Void)?
    var taskDidReceiveChallenge: (@Sendable (SessionTask, AuthenticationChallenge) -> ChallengeDisposition)?
    var taskWillPerformHTTPRedirection: (@Sendable (SessionTask, HTTPURLResponse, URLRequest) -> URLRequest?)?
    var taskNeedNewBodyStream: (@Sendable (SessionTask) -> RequestBody?)?
    var taskDidSendBodyData: (@Sendable (SessionTask, Int64, Int64, Int64) -> Void)?
    var taskDidComplete: (@Sendable (SessionTask, (any Error)?) -> Void)?
    var taskDidFinishCollectingMetrics: (@Sendable (SessionTask, EngineMetrics) -> Void)?
    var dataTaskDidReceiveResponse: (@Sendable (DataTask, HTTPURLResponse) -> ResponseDisposition)?
    var dataTaskDidReceiveData: (@Sendable (DataTask, Data) -> Void)?
    var dataTaskDidBecomeDownloadTask: (@Sendable (DataTask, DownloadTask) -> Void)?
    var downloadTaskDidFinishDownloading: (@Sendable (DownloadTask, URL) -> URL?)?
    var downloadTaskDidWriteData: (@Sendable (DownloadTask, Int64, Int64, Int64) -> Void)?
    var downloadTaskDidResume: (@Sendable (DownloadTask, Int64, Int64) -> Void)?

    /// Whether a block is set that a data or upload task's exchange calls (the head, the body,
    /// a redirect, a challenge, a replayed body, sent bytes, metrics); the download blocks and
    /// the completion block are not among them.
    var watchExchanges: Bool {
        taskDidSendBodyData != nil || taskWillPerformHTTPRedirection != nil || taskDidReceiveChallenge != nil
            || dataTaskDidReceiveResponse != nil || dataTaskDidReceiveData != nil || dataTaskDidBecomeDownloadTask != nil
            || taskDidFinishCollectingMetrics != nil || taskNeedNewBodyStream != nil
    }
}
