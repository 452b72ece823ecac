import Synchronization

/// The request numbers of a window's run, handed out one at a time to its workers.
final class RequestTickets: Sendable {
    private let count: Int
    private let next = Atomic<Int>(0)

    init(count: Int) {
        self.count = count
    }

    /// The next request's number, or nil once all `count` are taken.
    func take() -> Int? {
        let index = next.add(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
    }
}
