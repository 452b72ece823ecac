public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
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

/// An HTTP authentication challenge: the server answered 401 with `WWW-Authenticate`.
public struct AuthenticationChallenge: Sendable {
    /// `Basic` or `Digest` (as the server wrote it).
    public let scheme: String
    /// The `realm` parameter.
    public let realm: String?
    /// All parameters of the challenge, lowercased names.
    public let parameters: [String: String]
    /// How many times this task already answered a challenge.
    public let previousFailureCount: Int
    /// The 401 response.
    public let failureResponse: HTTPURLResponse
}

/// The answer to an ``AuthenticationChallenge`` (AFN's challenge dispositions).
public enum ChallengeDisposition: Sendable {
    /// Answer with this credential.
    case useCredential(URLCredential)
    /// Use the manager's ``URLSessionManager/credential`` if any, else deliver the 401.
    case performDefaultHandling
    /// Deliver the 401 as the response without answering.
    case rejectProtectionSpace
    /// Fail the task with ``CourierError/cancelled(url:)``.
    case cancel
}

/// A TLS server asking to be trusted: AFNetworking's `NSURLAuthenticationMethodServerTrust`
/// challenge, with the chain as the server sent it.
public struct ServerTrustChallenge: Sendable {
    /// The host the request named (a name or an IP literal).
    public let host: String
    /// The server's certificates, leaf first.
    public let certificateChain: [Certificate]
}

/// The answer to a ``ServerTrustChallenge``.
public enum ServerTrustDisposition: Sendable {
    /// Trust the server without further checks.
    case trust
    /// Refuse the server; the task fails with ``CourierError/serverTrustRejected(host:reason:)``.
    case reject(reason: String)
    /// Let the manager's ``URLSessionManager/securityPolicy`` decide.
    case performDefaultHandling
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

/// Receives a session's events, typed (Alamofire's `EventMonitor` is the model). Every method
/// has an empty default; implement the ones you need. A task's events arrive on that task's
/// own serial queue or the completion queue (resume and suspend: on the caller's thread),
/// never on an event loop; different tasks' events arrive concurrently: be thread-safe.
public protocol SessionEventMonitor: Sendable {
    /// A task was resumed.
    func taskDidResume(_ task: SessionTask)
    /// A task was suspended.
    func taskDidSuspend(_ task: SessionTask)
    /// A task's metrics are final.
    func task(_ task: SessionTask, didFinishCollecting metrics: EngineMetrics)
    /// A task completed, after its completion handler ran.
    func taskDidComplete(_ task: SessionTask, response: HTTPURLResponse?, responseObject: (any Sendable)?, error: (any Error)?)
    /// A download was moved to its destination.
    func downloadTask(_ task: DownloadTask, didMoveFileTo url: URL)
    /// A download could not be moved to its destination.
    func downloadTask(_ task: DownloadTask, didFailToMoveFileWith error: any Error)
    /// The session was invalidated.
    func sessionDidInvalidate(_ manager: URLSessionManager)
    /// An interceptor decided to send `request` again after `delay` seconds because of `error`
    /// (the task's ``SessionTask/retryCount`` goes up when the retry starts).
    func task(_ task: SessionTask, willRetry request: URLRequest, after delay: TimeInterval, dueTo error: any Error)
}

/// Empty defaults: a monitor implements only the events it wants.
extension SessionEventMonitor {
    /// Does nothing.
    public func taskDidResume(_ task: SessionTask) {}
    /// Does nothing.
    public func taskDidSuspend(_ task: SessionTask) {}
    /// Does nothing.
    public func task(_ task: SessionTask, didFinishCollecting metrics: EngineMetrics) {}
    /// Does nothing.
    public func taskDidComplete(_ task: SessionTask, response: HTTPURLResponse?, responseObject: (any Sendable)?, error: (any Error)?) {}
    /// Does nothing.
    public func downloadTask(_ task: DownloadTask, didMoveFileTo url: URL) {}
    /// Does nothing.
    public func downloadTask(_ task: DownloadTask, didFailToMoveFileWith error: any Error) {}
    /// Does nothing.
    public func sessionDidInvalidate(_ manager: URLSessionManager) {}
    /// Does nothing.
    public func task(_ task: SessionTask, willRetry request: URLRequest, after delay: TimeInterval, dueTo error: any Error) {}
}
