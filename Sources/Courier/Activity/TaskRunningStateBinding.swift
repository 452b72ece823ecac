public import Foundation
import Synchronization

/// UIActivityIndicatorView+ / UIRefreshControl+AFNetworking's `…WithStateOfTask:`, for any view:
/// tells `update` whether the bound task is running, now and at each of its resume (true),
/// suspend and complete (false) notifications.
///
/// `update` runs on the thread that binds (for the current state) and on the thread posting the
/// notification (a task's resume caller, or its completion queue); hop to the main queue in a
/// UIKit view. Thread-safe.
public final class TaskRunningStateBinding: Sendable {
    /// @unchecked: opaque observer handles, only handed back to `removeObserver(_:)`.
    private struct Observation: @unchecked Sendable {
        var task: SessionTask
        var tokens: [any NSObjectProtocol]
    }

    private let notificationCenter: NotificationCenter
    private let update: @Sendable (Bool) -> Void
    private let observation = Mutex<Observation?>(nil)

    /// A binding calling `update` with the running state, observing `notificationCenter`
    /// (default `.default`, where session managers post).
    public init(notificationCenter: NotificationCenter = .default, update: @escaping @Sendable (Bool) -> Void) {
        self.notificationCenter = notificationCenter
        self.update = update
    }

    deinit { unbind() }

    /// Follows `task` (nil: none) instead of the previous one; calls `update` with its state now.
    public func bind(to task: SessionTask?) {
        unbind()
        guard let task else { return }
        let update = update
        // A notification is delivered after its transition, outside the task's lock: by the
        // time a resume arrives a cancel or suspend on another thread may have ended the task
        // (its own notification follows, TaskNotificationOutbox), and one posted by hand may
        // come out of order. A resume shows running only while the task still is.
        let observe = { (name: Notification.Name, running: Bool) in
            self.notificationCenter.addObserver(forName: name, object: task, queue: nil) { _ in
                update(running && task.state == .running)
            }
        }
        let tokens = [
            observe(.courierTaskDidResume, true), observe(.courierTaskDidSuspend, false),
            observe(.courierTaskDidComplete, false),
        ]
        observation.withLock { $0 = Observation(task: task, tokens: tokens) }
        // A notification's update may run between reading the state and the call with it (the
        // task ending just then): call again with the state as it is now until it stops
        // changing, so the last call matches the task (a later change posts its notification).
        var shown = task.state == .running
        update(shown)
        while (task.state == .running) != shown, observation.withLock({ $0?.task === task }) {
            shown.toggle()
            update(shown)
        }
    }

    /// Stops following the task (AFN's removal of the observers).
    public func unbind() {
        guard let previous = observation.withLock({ current in defer { current = nil }; return current }) else { return }
        for token in previous.tokens { notificationCenter.removeObserver(token) }
    }
}
