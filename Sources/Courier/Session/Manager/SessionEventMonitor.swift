public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

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
