import CourierTestServer
import Foundation
import Testing

/// `--download`, `-o` and `--continue`.
@Suite("courier download")
struct DownloadCLITests {
    /// The bytes `/range/{n}` and `/download/{n}` send: `abc…z` repeated.
    static func alphabet(_ count: Int) -> Data {
        let letters = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        return Data((0..<count).map { letters[$0 % 26] })
    }

    @Test("--download -o FILE writes the body byte for byte; stdout stays empty; no bar when stderr is piped")
    func downloadToFile() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("out.bin")
        let size = 3 * 1024 * 1024 + 17
        let run = try await CourierProcess.run(["--download", "-o", file.path, server.baseURL.absoluteString + "/download/\(size)"])
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: file) == Self.alphabet(size))
        #expect(run.stdout.isEmpty)
        #expect(run.errors.contains("HTTP/1.1 200 OK"), "\(run)")
        #expect(run.errors.contains("Done. 3.0 MiB in "), "\(run)")
        #expect(!run.errors.contains("\r"), "no progress bar redraws on a pipe: \(run)")
    }

    @Test("without -o the file is named after the URL and an existing file is not overwritten")
    func downloadNamedAfterURL() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        try Data("keep me".utf8).write(to: directory.appendingPathComponent("5000"))
        let run = try await CourierProcess.run(["-d", server.baseURL.absoluteString + "/range/5000"], in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: directory.appendingPathComponent("5000-1")) == Self.alphabet(5000))
        #expect(try Data(contentsOf: directory.appendingPathComponent("5000")) == Data("keep me".utf8))
    }

    @Test("--continue resumes a partial file with a Range request and ends byte-identical")
    func resume() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("partial.bin")
        let size = 80_000
        try Self.alphabet(size).prefix(12_345).write(to: file)
        let run = try await CourierProcess.run([
            "--download", "--continue", "-o", file.path, server.baseURL.absoluteString + "/range/\(size)",
        ])
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: file) == Self.alphabet(size))
        // The server answered the Range request with the rest only.
        #expect(run.errors.contains("HTTP/1.1 206 Partial Content"), "\(run)")
        #expect(run.errors.contains("Content-Range: bytes 12345-79999/80000"), "\(run)")
        #expect(run.errors.contains("Resuming \(file.path) from byte 12345"), "\(run)")
    }

    @Test("--continue without -o is refused")
    func resumeNeedsOutput() async throws {
        let run = try await CourierProcess.run(["--download", "--continue", "http://127.0.0.1:9/range/10"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--continue needs --download and -o FILE"), "\(run)")
    }

    @Test("an error status saves nothing and exits with the status class")
    func errorStatus() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("missing.bin")
        let run = try await CourierProcess.run(["-d", "-o", file.path, server.baseURL.absoluteString + "/status/404"])
        #expect(run.status == 4, "\(run)")
        #expect(run.errors.contains("courier: error: HTTP 404 Not Found; nothing saved"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }
}
