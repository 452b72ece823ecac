import CourierTestServer
import Foundation
import Testing

/// `--continue -o FILE` with no `FILE.part`: FILE itself is resumed, and a server that ignores
/// the `Range` request (a `200` with the whole resource) must never truncate it (curl -C -
/// refuses too: "HTTP server doesn't seem to support byte ranges. Cannot resume.").
@Suite("courier --continue in place")
struct DownloadContinueInPlaceCLITests {
    /// Bytes that are not the server's `abc…z` pattern, so a rewrite is visible.
    static let usersBytes = Data(repeating: UInt8(ascii: "U"), count: 20_000)

    @Test("a 200 to the range request that then breaks off leaves FILE with all its bytes")
    func ignoredRangeThenFailureKeepsTheFile() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("mine.bin")
        try Self.usersBytes.write(to: file)
        // Ignores Range: 200, Content-Length 100000, 500 bytes, then FIN.
        let url = server.baseURL.absoluteString + "/fault/short-body?length=100000&sent=500"
        let run = try await CourierProcess.run(["--download", "--continue", "-o", file.path, url])
        #expect(run.status == 1, "\(run)")
        #expect(try Data(contentsOf: file) == Self.usersBytes, "FILE keeps its bytes: \(run)")
        #expect(run.errors.contains("ignored the range request"), "\(run)")
        #expect(run.errors.contains("\(file.path) was not changed"), "\(run)")
        #expect(DownloadCLITests.contents(directory) == ["mine.bin"], "\(run)")
    }

    @Test("a 200 with the whole resource to the range request is refused; FILE is not rewritten")
    func ignoredRangeIsRefused() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("mine.bin")
        try Self.usersBytes.write(to: file)
        // /download/{n} ignores Range and sends all n bytes with 200.
        let run = try await CourierProcess.run(["-d", "-c", "-o", file.path, server.baseURL.absoluteString + "/download/50000"])
        #expect(run.status == 1, "\(run)")
        #expect(try Data(contentsOf: file) == Self.usersBytes, "\(run)")
        #expect(run.errors.contains("Resuming \(file.path) from byte 20000"), "\(run)")
        #expect(run.errors.contains("without --continue"), "the hint says how to download it whole: \(run)")
        #expect(DownloadCLITests.contents(directory) == ["mine.bin"], "\(run)")
    }

    @Test("another 2xx to the range request (not 206) does not replace FILE", arguments: [201, 203, 204])
    func otherSuccessIsRefused(_ status: Int) async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("mine.bin")
        try Self.usersBytes.write(to: file)
        let run = try await CourierProcess.run(["-d", "-c", "-o", file.path, server.baseURL.absoluteString + "/status/\(status)"])
        #expect(run.status == 1, "\(run)")
        #expect(try Data(contentsOf: file) == Self.usersBytes, "\(run)")
        #expect(run.errors.contains("answered the range request with \(status)"), "\(run)")
        #expect(run.errors.contains("\(file.path) was not changed"), "\(run)")
        #expect(DownloadCLITests.contents(directory) == ["mine.bin"], "\(run)")
    }

    @Test("FILE.part answered with 200 is started over (HTTPie's behaviour): courier's own file, not the user's")
    func partFileStartsOverOnIgnoredRange() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.temporaryDirectory()
        let file = directory.appendingPathComponent("new.bin")
        try Data(repeating: UInt8(ascii: "P"), count: 7_000).write(to: directory.appendingPathComponent("new.bin.part"))
        let run = try await CourierProcess.run(["-d", "-c", "-o", file.path, server.baseURL.absoluteString + "/download/30000"])
        #expect(run.status == 0, "\(run)")
        #expect(try Data(contentsOf: file) == DownloadCLITests.alphabet(30_000), "\(run)")
        #expect(run.errors.contains("The server ignored the range request and sent the whole file"), "\(run)")
        #expect(DownloadCLITests.contents(directory) == ["new.bin"], "\(run)")
    }
}
