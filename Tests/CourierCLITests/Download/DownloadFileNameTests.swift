import CourierTestServer
import Foundation
import Testing

@testable import courier

/// `--download` without `-o`: the name the file gets in the current directory, from a
/// hostile URL or `Content-Disposition`.
@Suite("courier download file names")
struct DownloadFileNameTests {
    @Test("a URL's encoded '/' or '..' can't lead the file out of the current directory")
    func anEncodedSlashStaysInTheCurrentDirectory() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let work = try CourierProcess.temporaryDirectory()
        let current = work.appendingPathComponent("a/b")
        try FileManager.default.createDirectory(at: current, withIntermediateDirectories: true)
        let run = try await CourierProcess.run(["-d", server.baseURL.absoluteString + "/anything/..%2F..%2Fescaped"], in: current)
        #expect(run.status == 0, "\(run)")
        #expect(!FileManager.default.fileExists(atPath: work.appendingPathComponent("escaped").path), "\(run)")
        #expect(DownloadCLITests.contents(current) == ["escaped"], "\(run)")
    }

    @Test("a server's Content-Disposition can't name a dotfile; control characters never reach the terminal")
    func aServerCannotNameADotfileOrWriteEscapes() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let work = try CourierProcess.temporaryDirectory()
        let disposition = "attachment; filename=\".envrc\"".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let run = try await CourierProcess.run(
            ["-d", server.baseURL.absoluteString + "/response-headers?Content-Disposition=" + disposition], in: work)
        #expect(run.status == 0, "\(run)")
        #expect(DownloadCLITests.contents(work) == ["envrc"], "\(run)")

        let escapes = try CourierProcess.temporaryDirectory()
        let escaped = try await CourierProcess.run(["-d", server.baseURL.absoluteString + "/anything/%1B%5B31mred%07"], in: escapes)
        #expect(escaped.status == 0, "\(escaped)")
        #expect(!escaped.errors.contains("\u{1B}") && !escaped.errors.contains("\u{07}"), "\(escaped)")
        #expect(DownloadCLITests.contents(escapes) == ["_[31mred_"], "\(escaped)")
    }

    @Test("names with plain values: one component, no leading dots from a server, no control characters, bounded")
    func plainNames() {
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: "../../escaped") == "escaped")
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: ".ssh/authorized_keys") == "authorized_keys")
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: "..") == "index")
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: "/") == "index")
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: nil) == "index")
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: "a\u{0}b\u{1B}c\u{85}") == "a_b_c_")
        #expect(DownloadFileName.name(disposition: "attachment; filename=\"../.bashrc\"", lastPathComponent: "x") == "bashrc")
        #expect(DownloadFileName.name(disposition: "attachment; filename=\"...\"", lastPathComponent: "x") == "x")
        #expect(DownloadFileName.name(disposition: "attachment; filename=report.pdf; size=3", lastPathComponent: "x") == "report.pdf")
        // Bidirectional overrides and other invisible format characters can disguise a name
        // ("invoice<RLO>fdp.exe" shows as "invoiceexe.pdf").
        #expect(DownloadFileName.name(disposition: "attachment; filename=\"invoice\u{202E}fdp.exe\"", lastPathComponent: "x") == "invoice_fdp.exe")
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: "a\u{200B}b\u{2066}c") == "a_b_c")
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: "café-日本.txt") == "café-日本.txt")
        let long = DownloadFileName.name(disposition: nil, lastPathComponent: String(repeating: "é", count: 500))
        #expect(long.utf8.count <= DownloadFileName.maximumLength && long.count == DownloadFileName.maximumLength / 2)
    }

    @Test("a '/' or '.' joined to a combining mark (one Character with it) is still cut or dropped")
    func aSlashOrDotWithACombiningMarkIsStillCut() {
        // "/\u{301}" is one Character, not "/": the file went to ../\u{301}escaped, one folder up.
        #expect(DownloadFileName.name(disposition: nil, lastPathComponent: "../\u{301}escaped") == "\u{301}escaped")
        #expect(DownloadFileName.name(disposition: "attachment; filename=\"a/\u{301}b\"", lastPathComponent: "x") == "\u{301}b")
        // ".\u{301}envrc" starts with a '.' byte: a hidden file the server chose.
        #expect(DownloadFileName.name(disposition: "attachment; filename=\".\u{301}envrc\"", lastPathComponent: "x") == "\u{301}envrc")
        for name in [
            DownloadFileName.name(disposition: nil, lastPathComponent: "../\u{301}escaped"),
            DownloadFileName.name(disposition: "attachment; filename=\"..\u{301}/\u{302}x\"", lastPathComponent: "x"),
        ] {
            #expect(!name.utf8.contains(UInt8(ascii: "/")), "\(name.debugDescription)")
        }
    }
}
