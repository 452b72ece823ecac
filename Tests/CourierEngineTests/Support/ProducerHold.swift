import Synchronization

/// Waits until a body producer is held: `produced()` (the bytes it handed the engine so far)
/// is above zero and stays the same for a whole second (5 samples 200 ms apart), sampling at
/// most `attempts` times. Returns the last count and whether it held.
func waitUntilProducerIsHeld(attempts: Int, produced: () -> Int64) async throws -> (bytes: Int64, held: Bool) {
    var last: Int64 = -1
    var stableSamples = 0
    for _ in 0..<attempts where stableSamples < 5 {
        try await Task.sleep(for: .milliseconds(200))
        let now = produced()
        stableSamples = now == last && now > 0 ? stableSamples + 1 : 0
        last = now
    }
    return (last, stableSamples >= 5)
}

/// The bytes a body producer has handed the engine so far (written by the producer's task,
/// sampled by the test).
final class ProducedBytes: Sendable {
    private let total = Mutex<Int64>(0)

    func add(_ bytes: Int64) { total.withLock { $0 += bytes } }
    var count: Int64 { total.withLock { $0 } }
}
