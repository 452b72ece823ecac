import Synchronization

/// The number of echoes checked in a run, over every socket.
final class EchoTally: Sendable {
    private let checked = Atomic<Int>(0)

    func count() { checked.add(1, ordering: .relaxed) }

    var value: Int { checked.load(ordering: .relaxed) }
}
