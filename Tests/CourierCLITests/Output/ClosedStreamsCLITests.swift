import CourierTestServer
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// courier with a standard output or standard error whose reader is gone (`courier … | true`,
/// `2>&1 | head`): a closed stderr is ignored, a closed stdout ends the run with one line on
/// stderr and exit 1. Neither is a crash (FileHandle's write traps with SIGILL, exit 132).
@Suite("courier: closed standard streams")
struct ClosedStreamsCLITests {
    enum Stream { case output, error }

    /// Runs courier with `closed` connected to a pipe whose read end is already closed (every
    /// write fails with EPIPE, deterministically), the other stream captured.
    static func run(_ arguments: [String], closed: Stream) async throws -> (status: Int32, captured: String) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw CLITestFailure("pipe() failed: \(errno)") }
        close(ends[0])  // no reader, ever
        let dead = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        signal(SIGPIPE, SIG_IGN)
        let captured = Pipe()
        let process = Process()
        process.executableURL = CourierBinary.url
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        switch closed {
        case .output:
            process.standardOutput = dead
            process.standardError = captured
        case .error:
            process.standardOutput = captured
            process.standardError = dead
        }
        try ProcessLauncher.run(process)
        try dead.close()
        let watchdog = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            DispatchQueue.global().async {
                let data = captured.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        watchdog.cancel()
        #expect(process.terminationReason == .exit, "courier was killed by signal \(process.terminationStatus)")
        return (process.terminationStatus, text)
    }

    @Test func aFailureWithStderrClosedStillExitsWithItsStatus() async throws {
        let refusing = try RefusingPort()
        let run = try await Self.run(["http://127.0.0.1:\(refusing.port)/x"], closed: .error)
        #expect(run.status == 7, "\(run)")
    }

    @Test func aDownloadWithItsProgressBarOnAClosedStderrSucceeds() async throws {
        let directory = try CourierProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let file = directory.appendingPathComponent("out.bin")
            let run = try await Self.run(
                ["-d", "-o", file.path, server.baseURL.absoluteString + "/download/200000"], closed: .error)
            #expect(run.status == 0, "\(run)")
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
            #expect(size == 200_000)
        }
    }

    @Test func aClosedStdoutEndsWithOneLineAndExitOne() async throws {
        try await TestServer.withRunning { server in
            let run = try await Self.run([server.baseURL.absoluteString + "/bytes/100000"], closed: .output)
            #expect(run.status == 1, "\(run)")
            #expect(run.captured == "courier: error: could not write to standard output: Broken pipe\n", "\(run)")
        }
    }
}
