import Synchronization

/// A value behind a mutex, for the serializers' own settings (a `Sendable` class can't hold
/// a plain `var`).
final class LockedValue<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) { storage = Mutex(value) }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Changes one field of the value under the lock. `value.field = x` would read the whole
    /// value and write it back in two steps, losing a concurrent change to another field.
    func update(_ body: (inout Value) -> Void) {
        storage.withLock { body(&$0) }
    }
}
