public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Receives a session's events, typed (Alamofire's `EventMonitor` is the model). Every method
/// has an empty default; implement the ones you need.
///
/// Where the calls are made: never on an event loop, and one task's one at a time, in order.
/// Resume, suspend and `callStart` on the thread that calls them; while the task runs, on the
/// session's monitor queue (one serial queue per manager, shared by its tasks: a slow monitor
/// holds up the others' calls, never the network); what its end comes before (the last of its
/// events, `callEnd`, ``taskDidComplete(_:response:responseObject:error:)``) where the task
/// finishes: for an awaited call, in the awaiting Swift task before the call returns; else on the
/// task's queue and the completion queue. Calls for different tasks may arrive at once: be
/// thread-safe.
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
    /// One step of `task`: a phase starting or ending (the call, the wait for a connection,
    /// name lookup, connect, TLS, the request's head and body, the response's head and body),
    /// a connection acquired or released, or a decision (redirect, authentication, retry,
    /// cache, HSTS, replay). A task's events arrive one at a time, in order, never on an event
    /// loop (`callEnd` last, once the others were told); the monitors a task reports to are
    /// those the manager had when the task started. See ``TaskEvent``.
    func task(_ task: SessionTask, didReceive event: TaskEvent)
    /// One exchange of `task` ended (each hop has one: the first request, each redirect, each
    /// answer to a challenge, each retry): the request as sent, the response head, the metrics.
    /// After the exchange's events, on the session's monitor queue. See ``TaskExchange``.
    func task(_ task: SessionTask, didFinishExchange exchange: TaskExchange)
    /// Whether this monitor takes ``task(_:didReceive:)`` and ``task(_:didFinishExchange:)``.
    /// Default `true`; a monitor that only wants the other events returns `false`, and a task
    /// whose monitors all do builds no ``TaskEvent`` at all.
    var receivesTaskEvents: Bool { get }
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
    /// Does nothing.
    public func task(_ task: SessionTask, didReceive event: TaskEvent) {}
    /// Does nothing.
    public func task(_ task: SessionTask, didFinishExchange exchange: TaskExchange) {}
    /// `true`: the monitor receives task events.
    public var receivesTaskEvents: Bool { true }
}
