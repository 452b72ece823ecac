import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `courier` binary under `/usr/bin/time` and reports that one process's peak
/// resident set: how much memory a user would see it take, the kernel's own account rather
/// than a sample.
///
/// Why `/usr/bin/time` and not `wait4` from here: `posix_spawn` shares this test process's
/// address space until `exec`, and Linux carries the high-water mark of the address space a
/// process had before `exec` into its `ru_maxrss`. Reaped from here, the child's peak would
/// include this (large, parallel) test process's own. `time` forks a small process first, so
/// what it reads is courier's alone. (Debian's `time` package; `scripts/install-dependencies.sh`
/// installs it.)
enum MeasuredCourierRun {
    /// What the run produced, and the child's peak resident set in bytes.
    struct Result: CustomStringConvertible {
        var run: CourierRun
        var peakResidentBytes: Int

        var description: String { "\(run)\n--- peak RSS \(peakResidentBytes / 1_048_576) MiB" }
    }

    static let timeCommand = "/usr/bin/time"

    /// Runs `courier arguments` (stdin from `stdinPath`, /dev/null by default; stderr to a file) and waits for it on a
    /// Dispatch thread. Stdout goes to `stdoutPath` when given (a large body is then never read
    /// back into this process; `run.stdout` stays empty), else to a file read back. Gives up
    /// (SIGKILL) after `timeout` seconds.
    static func run(
        _ arguments: [String], stdoutPath: String? = nil, stdinPath: String = "/dev/null", timeout: Double = 300
    ) async throws -> Result {
        guard FileManager.default.isExecutableFile(atPath: timeCommand) else {
            throw CLITestFailure("\(timeCommand) is missing: run scripts/install-dependencies.sh (Debian's time package)")
        }
        let directory = try CourierProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outPath = stdoutPath ?? directory.appendingPathComponent("stdout").path
        let errPath = directory.appendingPathComponent("stderr").path
        let peakPath = directory.appendingPathComponent("peak-kib").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        let command = [timeCommand, "-f", "%M", "-o", peakPath, CourierBinary.url.path] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, timeCommand, &actions, nil, argv, environ)
        guard spawned == 0 else { throw CLITestFailure("posix_spawn failed: \(spawned)") }

        let child = pid
        let watchdog = DispatchWorkItem { kill(child, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            DispatchQueue.global().async {
                var status: Int32 = 0
                while waitpid(child, &status, 0) < 0 && errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
        watchdog.cancel()
        // Exit status (time passes courier's on), or 128 + signal, as a shell reports it.
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        // `time -o` writes "Command exited with non-zero status N" before the number when courier fails.
        let peakText = (try? String(contentsOfFile: peakPath, encoding: .utf8)) ?? ""
        guard let peakKiB = peakText.split(separator: "\n").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
            throw CLITestFailure("\(timeCommand) reported no peak: \(peakText.debugDescription)")
        }
        let run = CourierRun(
            status: exitStatus,
            stdout: stdoutPath == nil ? ((try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data()) : Data(),
            stderr: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data())
        return Result(run: run, peakResidentBytes: peakKiB * 1024)
    }
}
