import Synchronization

/// A thread-safe counter.
final class LockedCounter: Sendable {
    private let value = Mutex(0)

    /// Adds one and returns the new value.
    func increment() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
