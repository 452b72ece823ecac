import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What runs a ``SessionTask``: the object its public controls (resume, suspend, cancel,
/// progress) reach. ``TaskDelegate`` runs every kind of task with everything a manager offers;
/// ``DirectTaskRunner`` runs an awaited data task when the manager has nothing that needs
/// the delegate (no interceptor, cache, observability, monitor taking task events, exchange
/// block or credential).
protocol TaskDriver: AnyObject, Sendable {
    /// What the task runs with, captured from its manager.
    var environment: TaskEnvironment { get }
    /// Whether the task was ever resumed (it may hold a connection).
    var hasStarted: Bool { get }
    /// The task's upload and download progress.
    var progress: TaskProgress { get }
    /// Starts the task, or continues it after ``suspend()``.
    func resume()
    /// Pauses the transfer.
    func suspend()
    /// Stops the task; it ends with ``CourierError/cancelled(url:)``.
    func cancel()
    /// Cancels a download and hands over what it takes to continue it (nil when there is
    /// nothing to continue).
    func cancel(producingResumeData handler: @escaping @Sendable (DownloadResumeData?) -> Void)
}

extension TaskDriver {
    /// The upload progress (made on first use).
    var uploadProgress: Progress { progress.object(.upload) }
    /// The download progress (made on first use).
    var downloadProgress: Progress { progress.object(.download) }
}
