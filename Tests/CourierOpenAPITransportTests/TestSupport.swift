import Foundation
import Synchronization
import Testing

/// Polls `condition` every 20 ms for up to `seconds` (a hang bound, generous for a 2-core
/// machine running every suite at once); records a failure when it never holds.
func eventually(within seconds: Double = 60, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    if !condition() { Issue.record("condition not met within \(seconds) s") }
}

/// Values gathered from callbacks on other threads.
final class Recorded<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}
