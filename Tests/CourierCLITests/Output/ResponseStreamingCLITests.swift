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
    /// process): the exit status, stderr and courier's own peak resident set in bytes.
    static func run(_ arguments: [String], stdoutPath: String) async throws -> (status: Int32, stderr: String, peak: Int) {
        let measured = try await MeasuredCourierRun.run(arguments, stdoutPath: stdoutPath)
        return (measured.run.status, measured.run.errors, measured.peakResidentBytes)
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
