import Foundation

/// The `userInfo` of AFNetworking's task-completion notification
/// (``Foundation/NSNotification/Name/courierTaskDidComplete``), built without hashing its keys
/// per task.
///
/// Its keys are AFNetworking's string constants (``SessionNotificationKey``), 50-odd bytes
/// each: inserting them hashed each one in full and compared it with what sat in its bucket,
/// ~0.75 µs per notification warm and about 2 µs in a sequential request's profile, the
/// largest single cost the session added to an awaited call. Here, a dictionary holding
/// exactly the keys a notification carries is made once per combination of keys (32 at
/// most), together with each key's index; a notification copies it (no rehash: a copy keeps
/// its buckets, and its indices stay valid) and sets the values through those indices.
enum CompletionUserInfo {
    /// The keys in a fixed order; a combination is a bit set over this order.
    private static let keys: [String] = [
        SessionNotificationKey.responseSerializer, SessionNotificationKey.responseData, SessionNotificationKey.assetPath,
        SessionNotificationKey.serializedResponse, SessionNotificationKey.error, SessionNotificationKey.metrics,
    ]

    /// A combination's dictionary (placeholder values) and each key's index in it (nil when absent).
    private struct Template {
        let dictionary: [AnyHashable: Any]
        let indices: [Dictionary<AnyHashable, Any>.Index?]
    }

    /// Every combination's template, by its bit set. `nonisolated(unsafe)`: built once, never
    /// changed; `Any` values make the dictionary non-`Sendable`, but each use copies it.
    nonisolated(unsafe) private static let templates: [Template] = (0..<(1 << keys.count)).map { combination in
        var dictionary: [AnyHashable: Any] = [:]
        for (bit, key) in keys.enumerated() where combination & (1 << bit) != 0 {
            dictionary[AnyHashable(key)] = ()
        }
        let indices = keys.map { dictionary.index(forKey: AnyHashable($0)) }
        return Template(dictionary: dictionary, indices: indices)
    }

    /// The notification's `userInfo`: the serializer always, each other key when its value is there.
    static func make(
        serializer: any ResponseSerializer, data: Data?, assetURL: URL?, object: (any Sendable)?, error: (any Error)?,
        metrics: EngineMetrics?
    ) -> [AnyHashable: Any] {
        // Bits in the order of `keys`.
        var combination = 1
        if data != nil { combination |= 1 << 1 }
        if assetURL != nil { combination |= 1 << 2 }
        if object != nil { combination |= 1 << 3 }
        if error != nil { combination |= 1 << 4 }
        if metrics != nil { combination |= 1 << 5 }
        let template = templates[combination]
        var userInfo = template.dictionary
        func set(_ bit: Int, _ value: Any?) {
            if let value, let index = template.indices[bit] { userInfo.values[index] = value }
        }
        set(0, serializer)
        set(1, data)
        set(2, assetURL)
        set(3, object)
        set(4, error)
        set(5, metrics)
        return userInfo
    }
}
