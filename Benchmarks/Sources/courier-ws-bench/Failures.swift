import Synchronization

/// The failed sockets or openings of a run: their count and the first few errors.
final class Failures: Sendable {
    private let state = Mutex<(count: Int, samples: [String])>((0, []))

    func record(_ text: String) {
        state.withLock { state in
            state.count += 1
            if state.samples.count < 5 { state.samples.append(text) }
        }
    }

    var snapshot: (Int, [String]) { state.withLock { ($0.count, $0.samples) } }
}
