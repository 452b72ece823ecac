import BenchSupport
import Foundation
import Synchronization

/// One run of an external program (curl, wrk) as a reference client: its wall time, its own
/// CPU (wait4's rusage of that process alone) and its peak RSS, with stdout kept in a file.
struct ToolRun: Sendable {
    /// The exit status, or 128 + the signal number when a signal ended it.
    var status: Int32
    /// From just before posix_spawn to the moment the process exited (startup included: the
    /// program as a user runs it).
    var seconds: Double
    /// The process's user + system time, from wait4(2).
    var cpuMicros: Int64
    /// The largest VmHWM read from /proc/PID/status while it ran (sampled every 5 ms, so a
    /// lower bound); 0 when it exited before the first sample. Not wait4's ru_maxrss: a
    /// spawned process inherits its parent's high-water mark there.
    var peakRSSKiB: Int64
    /// Everything it wrote to stdout.
    var output: String
}

enum ToolProcess {
    /// The absolute path of `name` on `PATH` (or in /usr/bin, /usr/local/bin).
    ///
    /// - Throws: ``BenchError/io(_:)`` naming the setup script when it is not installed.
    static func locate(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
        for directory in directories where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw BenchError.io("\(name) is not installed (Benchmarks/nginx/setup.sh install puts curl and wrk in with apt-get)")
    }

    /// Runs `executable arguments` with stdout redirected to a temporary file and stderr
    /// inherited; returns when it exits, or kills it (SIGKILL) after `killAfter` seconds.
    ///
    /// - Throws: ``BenchError/io(_:)`` when it cannot be started or waited for.
    static func run(_ executable: String, _ arguments: [String], killAfter: Double) throws -> ToolRun {
        let outputPath = "\(NSTemporaryDirectory())/courier-bench-tool-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
        defer { unlink(outputPath) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }

        var pid: pid_t = 0
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw BenchError.io("cannot start \(executable): \(String(cString: strerror(spawned)))") }

        let child = pid
        let state = SampledState()
        let sampler = Thread {
            while !state.exited.load(ordering: .acquiring) {
                let kib = Self.peakRSSKiB(of: child)
                if kib > state.peakKiB.load(ordering: .relaxed) { state.peakKiB.store(kib, ordering: .relaxed) }
                usleep(5_000)
            }
        }
        sampler.start()
        let killer = DispatchWorkItem {
            if !state.exited.load(ordering: .acquiring) { kill(child, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + killAfter, execute: killer)

        // Wait for the exit without reaping (WNOWAIT), so the pid is not reused while the
        // sampler may still read /proc/PID; then reap it with wait4 for its rusage.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else { break }
        }
        let seconds = (ContinuousClock.now - start).seconds
        state.exited.store(true, ordering: .releasing)
        killer.cancel()
        while !sampler.isFinished { usleep(1_000) }

        var status: Int32 = 0
        var usage = rusage()
        var reaped: pid_t
        repeat {
            reaped = wait4(pid, &status, 0, &usage)
        } while reaped < 0 && errno == EINTR
        guard reaped == pid else { throw BenchError.io("wait4 on \(executable) failed: errno \(errno)") }

        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7f
        let exitStatus = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        let cpu =
            Int64(usage.ru_utime.tv_sec) * 1_000_000 + Int64(usage.ru_utime.tv_usec)
            + Int64(usage.ru_stime.tv_sec) * 1_000_000 + Int64(usage.ru_stime.tv_usec)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return ToolRun(
            status: exitStatus, seconds: seconds, cpuMicros: cpu,
            peakRSSKiB: state.peakKiB.load(ordering: .relaxed), output: output
        )
    }

    /// Shared by the waiting thread, the RSS sampler and the kill timer.
    final class SampledState: Sendable {
        /// Set once the process has exited (before it is reaped).
        let exited = Atomic<Bool>(false)
        /// The largest VmHWM sampled so far, KiB.
        let peakKiB = Atomic<Int64>(0)
    }

    /// VmHWM of a running process, KiB; 0 when it has none (exited, or not yet readable).
    static func peakRSSKiB(of pid: pid_t) -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return line.split(separator: " ").dropFirst().first.flatMap { Int64($0) } ?? 0
    }
}
