import Synchronization

/// Holds a task so its own completion closure (created before the task exists) can reach it.
final class TaskBox<T: SessionTask>: Sendable {
    private let stored = Mutex<T?>(nil)

    var task: T? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
