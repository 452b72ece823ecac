import Dispatch
import Synchronization

/// The disk commits of finished entries still running on their writers' file queues, by cache
/// key. A read, a removal or a usage figure first waits for those that concern it, so a lookup
/// made after a store has finished (from the session's point of view) sees the entry, as if
/// the files had been written on the spot.
final class CachePendingWrites: Sendable {
    private struct State {
        var nextID: UInt64 = 0
        var byKey: [String: [UInt64: DispatchQueue]] = [:]
    }

    private let state = Mutex(State())

    /// Records a commit of `key` that will run on `queue`; returns its ticket for ``end(key:ticket:)``.
    func begin(key: String, on queue: DispatchQueue) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            state.byKey[key, default: [:]][state.nextID] = queue
            return state.nextID
        }
    }

    /// The commit with `ticket` is done (called on its queue, as its last step).
    func end(key: String, ticket: UInt64) {
        state.withLock { state in
            state.byKey[key]?[ticket] = nil
            if state.byKey[key]?.isEmpty == true { state.byKey[key] = nil }
        }
    }

    /// Waits until every commit of `key` (nil: of any key) begun before this call has run.
    /// Never called on a writer's queue.
    func wait(for key: String?) {
        let queues: [DispatchQueue] = state.withLock { state in
            guard let key else { return state.byKey.values.flatMap(\.values) }
            return state.byKey[key].map { Array($0.values) } ?? []
        }
        for queue in queues { queue.sync {} }
    }
}
