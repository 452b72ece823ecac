public import Foundation
import Synchronization

/// Starts child processes for every test suite in the process, one at a time, and refuses
/// to start one where Foundation would crash.
///
/// Why: on Linux, swift-corelibs-foundation's `Process.run()` lists `/proc/self/fd` and copies
/// each entry's whole 256-byte name field, reading past glibc's 32 KiB readdir buffer once the
/// entries fill it (about 1,350 open descriptors; fixed upstream in swift-corelibs-foundation
/// PR #5472, not in Swift 6.3.1). That crash takes every suite in the process down with it, so
/// a start with more than ``descriptorLimit`` descriptors open throws
/// ``TooManyOpenDescriptors`` instead: one test fails, naming the cause. `scripts/test.sh` keeps
/// each test process well below the limit (three processes; measured peaks 588, 911, 416).
public enum ProcessLauncher {
    private static let lock = Mutex(())

    /// The most descriptors this process may hold when it starts a child (below the ~1,350
    /// where `Process.run()`'s over-read can reach past its buffer).
    public static let descriptorLimit = 1_200

    /// `Process.run()` refused because this process holds too many open descriptors.
    public struct TooManyOpenDescriptors: Error, CustomStringConvertible {
        /// The descriptors open when the start was refused.
        public let open: Int

        public var description: String {
            "not starting a child process with \(open) descriptors open (limit \(descriptorLimit)): Foundation's "
                + "Process.run() on Linux over-reads /proc/self/fd past ~1,350 (swift-corelibs-foundation PR #5472)"
        }
    }

    /// Runs `process.run()` while no other test in this process is starting one.
    /// - Throws: ``TooManyOpenDescriptors`` above ``descriptorLimit``; what `Process.run()` throws.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in
            if let error = refusal(openDescriptors: openDescriptorCount()) { throw error }
            try process.run()
        }
    }

    /// The refusal for a start with `openDescriptors` open, or nil when it may go ahead.
    public static func refusal(openDescriptors: Int?) -> TooManyOpenDescriptors? {
        guard let openDescriptors, openDescriptors > descriptorLimit else { return nil }
        return TooManyOpenDescriptors(open: openDescriptors)
    }

    /// How many descriptors this process holds (entries of `/proc/self/fd`, read by
    /// FoundationEssentials, which reads each entry's name by its length); nil without /proc.
    public static func openDescriptorCount() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count
    }
}
