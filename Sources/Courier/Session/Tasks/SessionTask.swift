public import CourierEngine
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import NIOHTTP1
import Synchronization

/// A request a session manager runs: AFNetworking's `NSURLSessionTask`.
///
/// Created suspended: call ``resume()`` to start it. ``suspend()`` really stops the transfer
/// (the socket is no longer read and the body no longer sent), ``cancel()`` stops it for good.
/// Every task calls its completion handler exactly once. Thread-safe.
///
/// `@unchecked Sendable`: all mutable state lives in `snapshot` and `delegateBox`, behind
/// mutexes; the subclasses (``DataTask``, ``UploadTask``, ``DownloadTask``) add none.
public class SessionTask: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// A task's life, as `URLSessionTask.State`.
    public enum State: Int, Sendable {
        /// Transferring.
        case running = 0
        /// Created and not resumed yet, or suspended.
        case suspended = 1
        /// Cancelled; the completion is on its way.
        case canceling = 2
        /// Finished (success or failure): the completion has been called.
        case completed = 3
    }

    struct Snapshot {
        var state: State = .suspended
        var currentRequest: URLRequest?
        /// The final response's head and URL; the `HTTPURLResponse` is made from them on first
        /// use (it is costly to make on Linux, and the event loop should not pay for it).
        var head: HTTPResponseHead?
        var responseURL: URL?
        var response: HTTPURLResponse?
        var taskDescription: String?
        var countOfBytesSent: Int64 = 0
        var countOfBytesReceived: Int64 = 0
        var countOfBytesExpectedToSend: Int64 = -1
        var countOfBytesExpectedToReceive: Int64 = -1
        var error: (any Error)?
        var metrics: EngineMetrics?
        var resumeData: DownloadResumeData?
        /// How many `HTTPURLResponse`s were made for this task (the final one, and any a hook
        /// needed for a redirect or a challenge): a test hook showing the hot path makes none.
        var responsesBuilt = 0
        /// Retries made so far (``SessionTask/retryCount``).
        var retryCount = 0
        /// Redirects followed so far (``SessionTask/redirectCount``).
        var redirectCount = 0
        /// The task's interceptor; from its first attempt on, chained after the manager's.
        var interceptor: (any RequestInterceptor)?
        /// The URL HSTS upgraded the hop in flight from (``SessionConfiguration/hsts``), if it did.
        var hstsUpgradedFrom: URL?
        /// How the hop in flight's body was compressed (``RequestCompressor``), if it was.
        var requestBodyCoding: RequestBodyCoding?

        /// Keeps a hop's metrics, marked with the URL HSTS upgraded the hop from; returns them.
        @discardableResult
        mutating func record(_ hopMetrics: EngineMetrics) -> EngineMetrics {
            var marked = hopMetrics
            if let hstsUpgradedFrom { marked.hstsUpgradedFrom = hstsUpgradedFrom }
            metrics = marked
            return marked
        }

        /// Records the final response's head; `made` is the `HTTPURLResponse` a hook already
        /// needed for it (kept, so the task never makes a second one).
        mutating func setResponse(head: HTTPResponseHead, url: URL, made: HTTPURLResponse?) {
            self.head = head
            self.responseURL = url
            self.response = made
        }

        /// The response, made now if needed: once per task, under the task's lock, so every
        /// reader gets the same object.
        mutating func madeResponse() -> HTTPURLResponse? {
            if let response { return response }
            guard let head, let responseURL else { return nil }
            let made = ResponseHeadBridge.makeResponse(head, url: responseURL)
            if made != nil { responsesBuilt += 1 }
            response = made
            return made
        }
    }

    /// The state behind a task. A class so that a data task that becomes a download task
    /// shares it with the new task: both show the same transfer.
    final class SharedSnapshot: Sendable {
        private let mutex: Mutex<Snapshot>

        init(_ snapshot: Snapshot) { mutex = Mutex(snapshot) }

        func withLock<R>(_ body: (inout Snapshot) throws -> R) rethrows -> R {
            try mutex.withLock { try body(&$0) }
        }
    }

    /// Unique among the tasks of one manager.
    public let taskIdentifier: Int
    /// The request as the task was created with.
    public let originalRequest: URLRequest?
    let snapshot: SharedSnapshot
    /// Set right after creation by the manager; the object that runs the task.
    let delegateBox = Mutex<(any TaskDriver)?>(nil)

    init(taskIdentifier: Int, request: URLRequest) {
        self.taskIdentifier = taskIdentifier
        self.originalRequest = request
        self.snapshot = SharedSnapshot(Snapshot(currentRequest: request))
    }

    /// A second face of `other`'s transfer, with its own identifier (a data task that became a
    /// download task).
    init(taskIdentifier: Int, sharingStateWith other: SessionTask) {
        self.taskIdentifier = taskIdentifier
        self.originalRequest = other.originalRequest
        self.snapshot = other.snapshot
    }

    var delegate: (any TaskDriver)? { delegateBox.withLock { $0 } }

    // MARK: - State

    /// Where the task is in its life.
    public var state: State { snapshot.withLock { $0.state } }
    /// The request being sent now (differs from ``originalRequest`` after a redirect).
    public var currentRequest: URLRequest? { snapshot.withLock { $0.currentRequest } }
    /// The final response, once its head arrived. Made from the engine's response head on
    /// first use (not on the event loop, and not at all when nobody reads it), then the same
    /// object on every access.
    public var response: HTTPURLResponse? { snapshot.withLock { $0.madeResponse() } }
    /// A label for the task (AFNetworking tags tasks with their manager's address here).
    public var taskDescription: String? {
        get { snapshot.withLock { $0.taskDescription } }
        set { snapshot.withLock { $0.taskDescription = newValue } }
    }
    /// Request body bytes sent.
    public var countOfBytesSent: Int64 { snapshot.withLock { $0.countOfBytesSent } }
    /// Response body bytes received.
    public var countOfBytesReceived: Int64 { snapshot.withLock { $0.countOfBytesReceived } }
    /// The request body's size, or -1 when unknown.
    public var countOfBytesExpectedToSend: Int64 { snapshot.withLock { $0.countOfBytesExpectedToSend } }
    /// The response body's size from `Content-Length`, or -1 when unknown.
    public var countOfBytesExpectedToReceive: Int64 { snapshot.withLock { $0.countOfBytesExpectedToReceive } }
    /// The error the task ended with, if any.
    public var error: (any Error)? { snapshot.withLock { $0.error } }
    /// Timings of the last exchange (after a redirect: the final hop), once it ended.
    public var metrics: EngineMetrics? { snapshot.withLock { $0.metrics } }
    /// How many times an interceptor had the task sent again (0 before any retry).
    public var retryCount: Int { snapshot.withLock { $0.retryCount } }
    /// How many redirects the task followed (0 before any).
    public var redirectCount: Int { snapshot.withLock { $0.redirectCount } }

    /// The task's upload or download progress as an async sequence: the current value first,
    /// then every change, ending when the task completes (a slow consumer gets the newest
    /// value). The Swift-concurrency counterpart of the progress blocks.
    ///
    /// ```swift
    /// for await progress in task.progressUpdates(.download) {
    ///     print(Int(progress.fractionCompleted * 100), "%")
    /// }
    /// ```
    public func progressUpdates(_ direction: TransferProgress.Direction) -> AsyncStream<TransferProgress> {
        guard let delegate else {
            let (stream, continuation) = AsyncStream<TransferProgress>.makeStream()
            continuation.finish()
            return stream
        }
        return delegate.progress.updates(direction)
    }

    // MARK: - Control

    /// Starts the task, or continues it after ``suspend()``. Posts
    /// ``Foundation/NSNotification/Name/courierTaskDidResume`` when it was not running.
    public func resume() {
        delegate?.resume()
    }

    /// Pauses the transfer: the socket is not read and the body not sent until ``resume()``.
    /// Posts ``Foundation/NSNotification/Name/courierTaskDidSuspend`` when it was running.
    public func suspend() {
        delegate?.suspend()
    }

    /// Stops the task; its completion receives ``CourierError/cancelled(url:)``.
    public func cancel() {
        delegate?.cancel()
    }

    // MARK: - Hashable

    /// Tasks are equal when they are the same object.
    public static func == (lhs: SessionTask, rhs: SessionTask) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// `DataTask(3, running, http://…)`.
    public var description: String {
        "\(type(of: self))(\(taskIdentifier), \(state), \(originalRequest?.url?.absoluteString ?? "-"))"
    }
}

/// A task that delivers the response body in memory. `NSURLSessionDataTask`.
public final class DataTask: SessionTask, @unchecked Sendable {}

/// A task that sends a body from memory, a file or a stream. `NSURLSessionUploadTask`.
public final class UploadTask: SessionTask, @unchecked Sendable {}

/// A task that streams the response body to a file. `NSURLSessionDownloadTask`.
public final class DownloadTask: SessionTask, @unchecked Sendable {
    /// What it takes to continue this download, once it failed or was cancelled with
    /// ``cancel(byProducingResumeData:)`` after receiving part of the body; nil otherwise.
    /// Pass it to ``URLSessionManager/downloadTask(withResumeData:progress:destination:completionHandler:)``.
    public var resumeData: DownloadResumeData? { snapshot.withLock { $0.resumeData } }

    /// Cancels the download and keeps what arrived so far. `handler` receives the resume data
    /// (nil when nothing usable arrived) before the completion handler runs; the partial file
    /// stays where ``DownloadResumeData/partialFileURL`` says until it is resumed or removed.
    public func cancel(byProducingResumeData handler: @escaping @Sendable (DownloadResumeData?) -> Void) {
        guard let delegate else {
            handler(nil)
            return
        }
        delegate.cancel(producingResumeData: handler)
    }
}
