public import Foundation
import Synchronization

/// Starts child processes one at a time for every test suite in the process.
///
/// swift-corelibs-foundation's `Process.run()` crashed twice in full parallel test runs (a bad
/// pointer inside its own `memcpy` while building the child, with other suites starting
/// processes at the same moment); each suite passed alone. Starting children under one lock
/// costs a few milliseconds per start and nothing once they run: they still run side by side.
public enum ProcessLauncher {
    private static let lock = Mutex(())

    /// Runs `process.run()` while no other test in this process is starting one.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
