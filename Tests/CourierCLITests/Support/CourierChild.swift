import Dispatch
import CourierTestServer
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A long-running `courier` child (`serve`, a `bench --duration`): its stdout is collected as
/// it arrives, so a test can wait for a line, send a signal and see how the process ended.
final class CourierChild: Sendable {
    private let process: Process
    private let collected = CollectedOutput()
    private let errors = CollectedOutput()

    /// Starts `courier arguments` (stdin /dev/null, stdout and stderr piped).
    init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = CourierBinary.url
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        self.process = process
        try ProcessLauncher.run(process)
        let collected = self.collected
        let errors = self.errors
        Thread.detachNewThread {
            while case let data = out.fileHandleForReading.availableData, !data.isEmpty {
                collected.append(data)
            }
        }
        Thread.detachNewThread {
            while case let data = err.fileHandleForReading.availableData, !data.isEmpty {
                errors.append(data)
            }
        }
    }

    /// Everything written to stdout so far.
    var output: String { String(decoding: collected.data, as: UTF8.self) }
    /// Everything written to stderr so far.
    var errorOutput: String { String(decoding: errors.data, as: UTF8.self) }
    /// The child's process id.
    var pid: Int32 { process.processIdentifier }

    /// Waits (polling every 50 ms, up to `bound` seconds: a hang bound, not a timing) until
    /// stdout contains `text` or the child has exited; returns whether the text arrived.
    func waitForOutput(containing text: String, bound: Double = 60) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + .seconds(bound)
        while clock.now < end {
            if output.contains(text) { return true }
            if !process.isRunning { return output.contains(text) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return output.contains(text)
    }

    /// Sends `signal` to the child.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the child to end (SIGKILL after `bound` seconds) and returns how it ended:
    /// `(reason, status)` where status is the exit status or the signal number.
    func waitForExit(bound: Double = 60) async -> (reason: Process.TerminationReason, status: Int32) {
        let process = self.process
        let watchdog = DispatchWorkItem { kill(process.processIdentifier, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + bound, execute: watchdog)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
        watchdog.cancel()
        return (process.terminationReason, process.terminationStatus)
    }
}

/// Bytes a reader thread appends and a test reads.
private final class CollectedOutput: Sendable {
    private let bytes = Mutex(Data())

    var data: Data { bytes.withLock { $0 } }

    func append(_ data: Data) {
        bytes.withLock { $0 += data }
    }
}
