public import Courier
public import ServiceLifecycle

/// Runs a ``Courier/URLSessionManager`` (or ``Courier/HTTPSessionManager``) as a
/// swift-service-lifecycle `Service`, so a server's `ServiceGroup` shuts its HTTP client down
/// in order: the manager keeps working until the group shuts down gracefully, then the
/// requests already running finish, the connections close, and only then does ``run()``
/// return (and the group go on to the services before it).
///
/// ```swift
/// let client = HTTPSessionManager(baseURL: api)
/// let group = ServiceGroup(
///     services: [SessionManagerService(manager: client), server],  // the client outlives the server
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// Shutdown is ``Courier/URLSessionManager/invalidateSession(cancelingTasks:resetSession:)``:
/// the manager is invalidated for good (tasks created afterwards fail with
/// ``Courier/CourierError/cancelled(url:)``), its did-become-invalid block, notification and
/// monitors are delivered, and ``run()`` returns once all of that is done. On graceful
/// shutdown the running tasks finish (or are cancelled, with `cancelsRunningTasks`); when the
/// group cancels the service instead (a cancellation signal, another service failing, the
/// group's `maximumGracefulShutdownDuration` running out), they are cancelled.
///
/// The service holds no state of its own; it is a value and `Sendable`. Run it once.
public struct SessionManagerService: Service {
    /// The manager this service shuts down.
    public let manager: URLSessionManager
    /// Whether graceful shutdown cancels the running tasks instead of letting them finish.
    public let cancelsRunningTasks: Bool

    /// A service for `manager`.
    ///
    /// - Parameters:
    ///   - manager: The manager to shut down with the group. Use it as usual meanwhile.
    ///   - cancelsRunningTasks: On graceful shutdown, cancel the running tasks (`true`) or let
    ///     them finish (`false`, the default; the group's `maximumGracefulShutdownDuration`
    ///     bounds the wait).
    public init(manager: URLSessionManager, cancelsRunningTasks: Bool = false) {
        self.manager = manager
        self.cancelsRunningTasks = cancelsRunningTasks
    }

    /// Waits for graceful shutdown (or cancellation), then invalidates the manager and
    /// returns once its running tasks have completed and its connections are closed. Never
    /// throws: cancellation ends the wait and cancels the running tasks.
    public func run() async throws {
        // Throws CancellationError when the group cancels the service instead: shut down then.
        let graceful = (try? await gracefulShutdown()) != nil
        await manager.invalidateSession(cancelingTasks: cancelsRunningTasks || !graceful || Task.isCancelled)
    }
}
