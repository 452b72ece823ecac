import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import courier

/// Review (R5): inputs a server, a file or the command line controls, in their hostile form,
/// against the CLI's pure pieces.
@Suite("courier hostile inputs")
struct CLIHostileInputTests {
    /// One `find` per '<' used to scan to the end of the text, and every emitted piece re-copied
    /// the output: 1 MiB of tags took minutes (now well under a second; the limit is a hang bound).
    @Test(.timeLimit(.minutes(1))) func markupColouringIsLinearInTheNumberOfTags() {
        let tags = String(repeating: "<a>", count: 350_000) + "<!-- unterminated" + String(repeating: "<![CDATA[", count: 1000)
        let colored = MarkupFormatter.colorize(tags)
        let plain = colored.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        #expect(plain == tags)
        let unterminated = "<a b=\"" + String(repeating: "x<y ", count: 250_000)
        #expect(MarkupFormatter.colorize(unterminated).hasSuffix("x<y \u{1B}[0m"))
    }

    /// A host that decodes to `..` or holds a `/` must not lead the session file out of
    /// `CONFIG/sessions/`.
    @Test func aHostCannotWalkTheSessionPathOutOfTheSessionsFolder() throws {
        let config = URL(fileURLWithPath: "/config")
        for host in ["http://%2e%2e/x", "http://../x", "http://%2e%2e%2f%2e%2e/", "http://a%2Fb/", "http://./"] {
            let url = try #require(URL(string: host))
            #expect(throws: RequestBuildError.self, "\(host)") {
                try SessionFile.location("s", url: url, configDirectory: config)
            }
        }
        let fine = try SessionFile.location("s", url: try #require(URL(string: "http://a.b:8/")), configDirectory: config)
        #expect(fine.path == "/config/sessions/a.b_8/s.json")
    }

    /// Indentation grows with depth: a body 511 arrays deep around a long flat array made each
    /// 2-byte element 2 KiB of output (about 1000 times the body, held whole as one string).
    /// Formatting that would pass ``JSONFormatter/maximumOutput(forInput:)`` gives up (the body
    /// prints as it came); ordinary documents still format.
    @Test func deeplyIndentedJSONCannotMultiplyTheBodyWithoutBound() {
        let hostile = Data((String(repeating: "[", count: 511) + String(repeating: "0,", count: 20_000) + "0"
            + String(repeating: "]", count: 511)).utf8)
        let formatted = JSONFormatter.format(hostile, indent: 4, colors: true)
        #expect((formatted?.utf8.count ?? 0) <= JSONFormatter.maximumOutput(forInput: hostile.count))
        #expect(formatted == nil)
        let ordinary = Data(#"{"a": [1, 2, {"b": [true, null, "x"]}], "c": {"d": {"e": {"f": [1.5, -2]}}}}"#.utf8)
        #expect(JSONFormatter.format(ordinary, indent: 4, colors: true) != nil)
    }

    /// `--stream --pretty` held a line that starts like JSON until its newline: a server sending
    /// `{` and then never a newline grew memory without bound. A line past `maximumLine` goes
    /// out as it came, and the rest of it too (up to its newline).
    @Test func aStreamedLineThatNeverEndsIsNotHeldWhole() {
        var options = PrintOptions()
        options.format = true
        var lines = LineFormatter(printer: ExchangePrinter(options: options), maximumLine: 1024)
        #expect(lines.take(Data("{".utf8) + Data(repeating: UInt8(ascii: "x"), count: 600)).isEmpty)
        let flushed = lines.take(Data(repeating: UInt8(ascii: "y"), count: 600))
        #expect(flushed.count == 1201)
        #expect(lines.take(Data(#"{"a":1}"#.utf8)) == Data(#"{"a":1}"#.utf8))
        #expect(String(decoding: lines.take(Data("z\n{\"b\":2}\n".utf8)), as: UTF8.self) == "z\n{\n    \"b\": 2\n}\n")
        // Many short lines in one chunk: each is handled once (no copy of the rest per line).
        var many = LineFormatter(printer: ExchangePrinter(options: options))
        let chunk = Data(String(repeating: "a\n", count: 200_000).utf8)
        #expect(many.take(chunk) == chunk)
    }

    /// A line held to be formatted was scanned for its newline and copied whole again with
    /// every chunk: a server sending a long JSON-looking line a few bytes at a time cost time
    /// quadratic in its length. Each chunk now costs its own length (the limit is a hang bound).
    @Test(.timeLimit(.minutes(1))) func aLongLineArrivingInSmallChunksIsScannedOnce() {
        var options = PrintOptions()
        options.format = true
        var lines = LineFormatter(printer: ExchangePrinter(options: options), maximumLine: 8 << 20)
        let piece = Data("  xx".utf8)
        var out = lines.take(Data("{".utf8))
        for _ in 0..<(1 << 20) { out += lines.take(piece) }
        #expect(out.isEmpty)
        out += lines.take(Data("}\n".utf8))
        #expect(out.count == 1 + 4 * (1 << 20) + 2)
    }

    /// A line whose start went out raw (it can't be JSON) stays raw up to its newline: a tail
    /// that arrives later and looks like JSON (`abc`, then `{"a":1}`) is not formatted as if it
    /// were a line of its own.
    @Test func theTailOfALineSentRawIsNotFormatted() {
        var options = PrintOptions()
        options.format = true
        var lines = LineFormatter(printer: ExchangePrinter(options: options))
        #expect(lines.take(Data("abc".utf8)) == Data("abc".utf8))
        #expect(String(decoding: lines.take(Data("{\"a\":1}\n{\"b\":2}\n".utf8)), as: UTF8.self) == "{\"a\":1}\n{\n    \"b\": 2\n}\n")
        #expect(lines.take(Data("x".utf8)) == Data("x".utf8))
        #expect(lines.take(Data("[1]".utf8)) == Data("[1]".utf8))
        #expect(lines.finish().isEmpty)
    }

    /// The session and config files were read whole with `Data(contentsOf:)`: a FIFO hung
    /// courier, `/dev/zero` or a huge file took memory without bound. Now they must be regular
    /// files of at most 16 MiB (a symlink to one is followed, as before).
    @Test(.timeLimit(.minutes(1))) func sessionAndConfigFilesMustBeSmallRegularFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("r5-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("config.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        #expect(throws: RequestBuildError.self) { try ConfigFile.defaultOptions(in: folder) }
        #expect(throws: RequestBuildError.self) { try SessionFile.load(from: fifo) }
        #expect(throws: RequestBuildError.self) { try SessionFile.load(from: URL(fileURLWithPath: "/dev/zero")) }
        #expect(throws: RequestBuildError.self) { try SessionFile.load(from: folder) }
        let huge = folder.appendingPathComponent("huge.json")
        #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
        #expect(truncate(huge.path, 1 << 30) == 0)
        let error = #expect(throws: RequestBuildError.self) { try SessionFile.load(from: huge) }
        #expect(error?.description.contains("larger than") == true, "\(String(describing: error))")
        let link = folder.appendingPathComponent("link.json")
        try Data(#"{"__meta__": {"about": "a", "help": "h"}, "headers": [{"name": "X", "value": "1"}], "cookies": []}"#.utf8).write(to: folder.appendingPathComponent("real.json"))
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "real.json")
        #expect(try SessionFile.load(from: link).headers == [.init(name: "X", value: "1")])
        // COURIER_CONFIG_DIR naming a file: no config, as when the folder is missing.
        #expect(try ConfigFile.defaultOptions(in: link) == [])
    }

    /// A session header with CR/LF was dropped without a word when the request was built, a
    /// name that is not a token (refused when typed) was taken from the file unchecked, and a
    /// cookie's fields went into a Set-Cookie line unchecked: the file is refused instead.
    @Test func aSessionWithControlCharactersInAHeaderOrCookieIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("r5-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("s.json")
        let header = #"{"name": "X-A", "value": "v\r\nX-Injected: 1"}"#
        let cookie = #"{"name": "c", "value": "1; Domain=evil\r\n", "domain": "h", "hostOnly": true, "path": "/", "secure": false, "httpOnly": false}"#
        // A name that is not an RFC 9110 token (as a typed `Name:value` item must be).
        let badNames = ["", "X A", "X:Y", "Ä"].map { #"{"name": "\#($0)", "value": "v"}"# }
        for (headers, cookies) in [(header, ""), ("", cookie)] + badNames.map({ ($0, "") }) {
            try Data(#"{"__meta__": {"about": "a", "help": "h"}, "headers": [\#(headers)], "cookies": [\#(cookies)]}"#.utf8).write(to: file)
            let error = #expect(throws: RequestBuildError.self) { try SessionFile.load(from: file) }
            #expect(error?.description.contains(file.path) == true, "\(String(describing: error))")
        }
    }

    /// A session whose credentials are of a type courier can't send (`bearer`, `Basic`) had them
    /// ignored without a word (neither basic nor digest was set up): the file is refused, naming
    /// the type; `basic` and `digest` still load.
    @Test func aSessionWithAnAuthTypeCourierCannotSendIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("r-edge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("s.json")
        for type in ["bearer", "Basic", ""] {
            try Data(#"{"__meta__": {"about": "a", "help": "h"}, "headers": [], "cookies": [], "auth": {"type": "\#(type)", "username": "ada", "password": "pw"}}"#.utf8)
                .write(to: file)
            let error = #expect(throws: RequestBuildError.self, "\(type)") { try SessionFile.load(from: file) }
            #expect(error?.description.contains("'\(type)'") == true, "\(String(describing: error))")
        }
        for type in ["basic", "digest"] {
            try Data(#"{"__meta__": {"about": "a", "help": "h"}, "headers": [], "cookies": [], "auth": {"type": "\#(type)", "username": "ada"}}"#.utf8).write(to: file)
            #expect(try SessionFile.load(from: file).auth == .init(type: type, username: "ada", password: nil))
        }
    }
}
