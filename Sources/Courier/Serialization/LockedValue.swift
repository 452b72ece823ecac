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
}
