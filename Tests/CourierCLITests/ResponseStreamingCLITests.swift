import CourierTestServer
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `courier URL > file`: the body streams to stdout, so a response of any size passes through
/// in bounded memory (the kernel's `ru_maxrss` for the child).
@Suite("courier streams responses to stdout")
struct ResponseStreamingCLITests {
    /// Runs `courier arguments` with stdout into `stdoutPath` (never read back into this
    /// process) and returns the exit status, stderr and the child's peak resident set in bytes.
    ///
    /// The peak comes from `/usr/bin/time` (a small process that forks courier and reads its
    /// `ru_maxrss`): measured with `wait4` from here, `ru_maxrss` would also count this test
    /// process's own peak, because Linux carries the pre-exec address space's high-water mark
    /// (posix_spawn shares the parent's) into the child's. Without `/usr/bin/time`, it falls
    /// back to that upper bound.
    static func run(_ arguments: [String], stdoutPath: String) async throws -> (status: Int32, stderr: String, peak: Int) {
        let directory = try CourierProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let errPath = directory.appendingPathComponent("stderr").path
        let timePath = directory.appendingPathComponent("maxrss").path
        let timer = "/usr/bin/time"
        let timed = FileManager.default.isExecutableFile(atPath: timer)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let courier = CourierBinary.url.path
        let executable = timed ? timer : courier
        let command = timed ? [timer, "-f", "%M", "-o", timePath, courier] + arguments : [courier] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw CLITestFailure("posix_spawn failed: \(spawned)") }
        let child = pid
        let watchdog = DispatchWorkItem { kill(child, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 300, execute: watchdog)
        let (status, usage) = await withCheckedContinuation { (continuation: CheckedContinuation<(Int32, rusage), Never>) in
            DispatchQueue.global().async {
                var status: Int32 = 0
                var usage = rusage()
                while wait4(child, &status, 0, &usage) < 0 && errno == EINTR {}
                continuation.resume(returning: (status, usage))
            }
        }
        watchdog.cancel()
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        // `time -o` writes "Command exited with non-zero status N" first when courier fails.
        let timedKiB = (try? String(contentsOfFile: timePath, encoding: .utf8))?
            .split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        return (exitStatus, stderr, (timedKiB ?? Int(usage.ru_maxrss)) * 1024)
    }

    @Test func aGibibyteResponseStreamsToStdoutInBoundedMemory() async throws {
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("body").path
            let size = 1 << 30
            let result = try await Self.run([server.baseURL.absoluteString + "/download/\(size)"], stdoutPath: output)
            #expect(result.status == 0, "\(result.stderr)")
            let attributes = try FileManager.default.attributesOfItem(atPath: output)
            #expect((attributes[.size] as? NSNumber)?.intValue == size)
            // `abc…z` repeated: check the tail.
            let handle = try #require(FileHandle(forReadingAtPath: output))
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(size - 26))
            let tail = try #require(try handle.read(upToCount: 26))
            let expected = (0..<26).map { UInt8(ascii: "a") + UInt8((size - 26 + $0) % 26) }
            #expect(Array(tail) == expected)
            #expect(result.peak < 128 << 20, "peak RSS \(result.peak >> 20) MiB")
        }
    }

    @Test func headersOnlyOfAGibibyteResponseDoNotReadTheBody() async throws {
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("head").path
            let result = try await Self.run(["--print", "h", server.baseURL.absoluteString + "/download/\(1 << 30)"], stdoutPath: output)
            #expect(result.status == 0, "\(result.stderr)")
            let text = try String(contentsOfFile: output, encoding: .utf8)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\n"), "\(text)")
            #expect(text.contains("Content-Length: 1073741824"))
            #expect(text.utf8.count < 1000)
            #expect(result.peak < 128 << 20, "peak RSS \(result.peak >> 20) MiB")
        }
    }

    @Test func headersThenTheStreamedBody() async throws {
        try await TestServer.withRunning { server in
            let directory = try CourierProcess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("body").path
            let result = try await Self.run(["--print", "hb", server.baseURL.absoluteString + "/range/100"], stdoutPath: output)
            #expect(result.status == 0, "\(result.stderr)")
            let text = try String(contentsOfFile: output, encoding: .utf8)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\n"), "\(text)")
            let body = String(repeating: "abcdefghijklmnopqrstuvwxyz", count: 4).prefix(100)
            #expect(text.hasSuffix("\n\n" + body), "\(text)")
        }
    }
}
