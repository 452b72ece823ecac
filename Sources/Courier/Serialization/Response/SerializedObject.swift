/// The object a serializer produced, as a completed task hands it out (erased to `any Sendable`).
enum SerializedObject {
    /// `Optional<T>.none` boxed in `any Sendable` becomes a real nil (an `Optional.some` stays
    /// boxed; casting it with `as?` sees through it), at any depth of nesting.
    static func unwrapped(_ value: (any Sendable)?) -> (any Sendable)? {
        guard let value else { return nil }
        if let optional = value as? any OptionalProtocol, optional.courierIsNil { return nil }
        return value
    }
}

/// Lets ``SerializedObject/unwrapped(_:)`` see through `Optional` without knowing its wrapped type.
protocol OptionalProtocol {
    var courierIsNil: Bool { get }
}

extension Optional: OptionalProtocol {
    var courierIsNil: Bool {
        if case .none = self { return true }
        if case .some(let wrapped) = self, let inner = wrapped as? any OptionalProtocol { return inner.courierIsNil }
        return false
    }
}
