@testable import courier
import CourierTestServer
import Foundation
import Testing

/// `--har FILE`: an HTTP Archive 1.2 of every exchange of the call, read back by a HAR library
/// that is not Courier's (haralyzer, from PyPI, installed in the package's venv).
@Suite("courier --har")
struct HARCLITests {
    private static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// haralyzer's view of `file`: one line per entry (`status method url`), then a line with
    /// each entry's total time and whether its timings are all there.
    private static func haralyzer(_ file: URL) throws -> [String] {
        let python = packageRoot.appendingPathComponent(".build/python-venv/bin/python").path
        let script = """
            import json, sys
            from haralyzer import HarParser
            with open(sys.argv[1]) as f:
                parser = HarParser(json.load(f))
            for page in parser.pages:
                for entry in page.entries:
                    print(entry.status, entry.request.method, entry.url, entry.time >= 0, sorted(entry.timings.keys()))
            """
        let result = try ProcessLauncher.runToEnd(python, ["-c", script, file.path], includingStandardError: true)
        let text = String(decoding: result.output, as: UTF8.self)
        #expect(result.status == 0, "haralyzer: \(text)")
        return text.split(separator: "\n").map(String.init)
    }

    @Test("a call through two redirects is three entries, each read by haralyzer, and credentials stay hidden")
    func redirectsAreEntriesAndSecretsAreHidden() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let url = server.baseURL.absoluteString + "/redirect/2"
        let run = try await CourierProcess.run(["--follow", "--har", file.path, "--print", "b", url, "Authorization:Bearer sekrit"])
        #expect(run.status == 0, "\(run)")
        let archive = try JSONDecoder().decode(HARArchiveProbe.self, from: Data(contentsOf: file))
        #expect(archive.log.version == "1.2")
        #expect(archive.log.entries.map(\.response.status) == [302, 302, 200])
        let first = try #require(archive.log.entries.first)
        #expect(first.request.headers.contains { $0.name == "Authorization" && $0.value == "REDACTED" })
        #expect(!(try String(contentsOf: file, encoding: .utf8)).contains("sekrit"))
        #expect(first.response.redirectURL == "/relative-redirect/1")
        #expect(first.timings.connect >= 0, "the first entry opened the connection")
        #expect(archive.log.entries.last?.timings.connect == -1, "the last rode the same connection")
        #expect(first.serverIPAddress == "127.0.0.1")

        let lines = try Self.haralyzer(file)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first?.hasPrefix("302 GET \(url) True") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("200 GET \(server.baseURL.absoluteString)/get True") == true, "\(lines)")
    }

    @Test("--har-include-secrets keeps them; --har-include-secrets alone is a usage error")
    func secretsOnRequest() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await CourierProcess.run([
            "--har", file.path, "--har-include-secrets", "--print", "b", server.baseURL.absoluteString + "/get", "Authorization:Bearer sekrit",
        ])
        #expect(run.status == 0, "\(run)")
        #expect(try String(contentsOf: file, encoding: .utf8).contains("Bearer sekrit"))

        let alone = try await CourierProcess.run(["--har-include-secrets", server.baseURL.absoluteString + "/get"])
        #expect(alone.status == 2, "\(alone)")
        #expect(alone.errors.contains("--har-include-secrets needs --har"), "\(alone)")
    }

    @Test("a call that fails to connect still writes its one entry, with no response")
    func aFailedCallIsRecorded() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        // Port 1: nothing listens there (a freed port may be taken by another test's server).
        let run = try await CourierProcess.run(["--har", file.path, "http://127.0.0.1:1/get"])
        #expect(run.status != 0)
        let archive = try JSONDecoder().decode(HARArchiveProbe.self, from: Data(contentsOf: file))
        #expect(archive.log.entries.map(\.response.status) == [0])
        #expect(try Self.haralyzer(file).count == 1)
    }
}

/// The parts of a HAR file the tests read, decoded on their own (not with Courier's types).
private struct HARArchiveProbe: Decodable {
    struct Log: Decodable {
        var version: String
        var entries: [Entry]
    }
    struct Entry: Decodable {
        var request: Request
        var response: Response
        var timings: Timings
        var serverIPAddress: String?
    }
    struct Request: Decodable {
        var headers: [Pair]
    }
    struct Response: Decodable {
        var status: Int
        var redirectURL: String
    }
    struct Pair: Decodable {
        var name: String
        var value: String
    }
    struct Timings: Decodable {
        var connect: Double
    }
    var log: Log
}
