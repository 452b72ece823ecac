import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// courier's writes to standard output and standard error. `FileHandle.write(_:)` traps
/// (SIGILL) when the descriptor is a closed pipe (`courier … 2>&1 | true`), and
/// `write(contentsOf:)` throws an error that reads as an `NSCocoaErrorDomain` dump; these
/// write with `write(2)` instead, whole, through `EINTR` and non-blocking descriptors.
enum StandardStreams {
    /// Writes `data` to standard error. A closed or failing standard error is ignored:
    /// diagnostics and progress bars never end a run.
    static func writeError(_ data: Data) {
        _ = writeAll(STDERR_FILENO, data)
    }

    /// Writes `text` (UTF-8) to standard error; see the `Data` form.
    static func writeError(_ text: String) {
        writeError(Data(text.utf8))
    }

    /// Writes `data` to standard output. When standard output is gone (a closed pipe, a full
    /// disk), what courier prints has nowhere to go: it says so in one line on standard error
    /// and exits with status 1 (``ExitStatus/error``).
    static func writeOutput(_ data: Data) {
        guard let failure = writeAll(STDOUT_FILENO, data) else { return }
        writeError("courier: error: could not write to standard output: \(String(cString: strerror(failure)))\n")
        exit(ExitStatus.error.rawValue)
    }

    /// Writes `text` (UTF-8) to standard output; see the `Data` form.
    static func writeOutput(_ text: String) {
        writeOutput(Data(text.utf8))
    }

    /// Ignores SIGPIPE, so that a write to a closed pipe fails with `EPIPE` (handled above)
    /// instead of killing the process without a word.
    static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Writes all of `data` to `descriptor`; nil when it did, else the `errno` it failed with.
    private static func writeAll(_ descriptor: Int32, _ data: Data) -> Int32? {
        data.withUnsafeBytes { raw -> Int32? in
            guard var next = raw.baseAddress else { return nil }
            var remaining = raw.count
            while remaining > 0 {
                let written = write(descriptor, next, remaining)
                if written >= 0 {
                    next += written
                    remaining -= written
                    continue
                }
                let failure = errno
                switch failure {
                case EINTR:
                    continue
                case EAGAIN:
                    // A non-blocking descriptor that is full: wait until it can take more.
                    var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, -1)
                default:
                    return failure
                }
            }
            return nil
        }
    }
}
