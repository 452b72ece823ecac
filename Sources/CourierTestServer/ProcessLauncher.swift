public import Foundation
import Synchronization

/// Starts child processes one at a time for every test suite in the process.
///
/// Why the suites crashed in `Process.run()` (a bad pointer in `memcpy`): on Linux it lists
/// `/proc/self/fd` and copies each entry's whole 256-byte name field, reading past glibc's
/// readdir buffer once the entries fill it (about 1,350 open descriptors; fixed upstream in
/// swift-corelibs-foundation PR #5472, not in Swift 6.3.1). This lock does not prevent that;
/// keeping each test process below that many descriptors does (`scripts/test.sh` runs the
/// targets in three processes). The lock stays: one start at a time costs a few milliseconds
/// and keeps the descriptors a start opens from piling up.
public enum ProcessLauncher {
    private static let lock = Mutex(())

    /// Runs `process.run()` while no other test in this process is starting one.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
