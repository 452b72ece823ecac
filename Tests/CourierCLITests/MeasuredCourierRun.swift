import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `courier` binary with `posix_spawn` and reaps it with `wait4`, so the
/// kernel's own account of that one child's peak resident set (`ru_maxrss`) is known: how
/// much memory a user would see it take, measured exactly rather than by sampling.
enum MeasuredCourierRun {
    /// What the run produced, and the child's peak resident set in bytes.
    struct Result: CustomStringConvertible {
        var run: CourierRun
        var peakResidentBytes: Int

        var description: String { "\(run)\n--- peak RSS \(peakResidentBytes / 1_048_576) MiB" }
    }

    /// Runs `courier arguments` (stdin /dev/null, stdout and stderr to files) and waits for it
    /// on a Dispatch thread. Gives up (SIGKILL) after 120 s.
    static func run(_ arguments: [String]) async throws -> Result {
        let directory = try CourierProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outPath = directory.appendingPathComponent("stdout").path
        let errPath = directory.appendingPathComponent("stderr").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        let executable = CourierBinary.url.path
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw CLITestFailure("posix_spawn failed: \(spawned)") }

        let child = pid
        let watchdog = DispatchWorkItem { kill(child, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        let (status, usage) = await withCheckedContinuation { (continuation: CheckedContinuation<(Int32, rusage), Never>) in
            DispatchQueue.global().async {
                var status: Int32 = 0
                var usage = rusage()
                while wait4(child, &status, 0, &usage) < 0 && errno == EINTR {}
                continuation.resume(returning: (status, usage))
            }
        }
        watchdog.cancel()
        // Exit status, or 128 + signal for a child killed by a signal (as a shell reports it).
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let run = CourierRun(
            status: exitStatus, stdout: (try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data(),
            stderr: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data())
        return Result(run: run, peakResidentBytes: Int(usage.ru_maxrss) * 1024)  // Linux: KiB
    }
}
