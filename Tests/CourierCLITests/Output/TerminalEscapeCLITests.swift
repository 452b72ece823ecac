import CourierTestServer
import Foundation
import Testing

/// A response's head can't carry the server's terminal controls to the screen. The header
/// layer turns C0 controls into spaces; C1 controls (U+0080...U+009F, such as CSI U+009B, which
/// xterm and VTE act on in UTF-8) arrive as obs-text and are shown escaped.
@Suite("courier terminal escapes")
struct TerminalEscapeCLITests {
    @Test("an HTTP/2 header value with ESC, BEL or a C1 control is printed without them")
    func http2HeaderControlsAreNotPrinted() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let url = server.baseURL.absoluteString + "/response-headers?X-Evil=a%1B%5D0%3Bpwned%07b%C2%9B2J%C2%9D0%3Bt%C2%9C"
            let ca = try TLSCLITests.rootCAFile().path
            let run = try await CourierProcess.run(["--verify", ca, "-p", "h", url])
            #expect(run.status == 0, "\(run)")
            #expect(run.output.hasPrefix("HTTP/2 200"), "\(run)")
            #expect(!run.output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F..<0xA0).contains($0.value) }, "\(run)")
            #expect(run.output.contains("x-evil: a ]0;pwned b\\u{9B}2J\\u{9D}0;t\\u{9C}\n"), "\(run)")
        }
    }

    @Test("the printed request line of a redirect hop shows its target as sent, escapes and all")
    func aRedirectTargetIsPrintedAsSent() async throws {
        try await TestServer.withRunning { server in
            // Location: /anything/x%1B%5D0;pwned%07%C2%9B2J%20y (OSC, BEL, CSI, a space), encoded again as a query value.
            let location = "/anything/x%1B%5D0;pwned%07%C2%9B2J%20y"
            let query = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let run = try await CourierProcess.run(
                ["--all", "--follow", "-p", "H", server.baseURL.absoluteString + "/redirect-to?url=" + query])
            #expect(run.status == 0, "\(run)")
            #expect(!run.output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F..<0xA0).contains($0.value) }, "\(run)")
            #expect(run.output.contains("\nGET \(location) HTTP/1.1\n"), "\(run)")
        }
        let offline = try await CourierProcess.run(["--offline", "-p", "H", "http://h/a%0Ab%20c?q=%0A"])
        #expect(offline.output.hasPrefix("GET /a%0Ab%20c?q=%0A HTTP/1.1\n"), "\(offline)")
    }

    @Test("an HTTP/1.1 header value with a C1 control is printed escaped; a tab stays a tab")
    func http1HeaderC1ControlsAreEscaped() async throws {
        let server = try await HostileServer.start(
            .answer(headers: ["Content-Length: 2", "X-Evil: a\u{9B}2Jb", "X-Tab: a\tb"], body: "ok"))
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["-p", "h", "http://127.0.0.1:\(server.port)/"])
        #expect(run.status == 0, "\(run)")
        #expect(!run.output.unicodeScalars.contains { (0x80..<0xA0).contains($0.value) }, "\(run)")
        #expect(run.output.contains("X-Evil: a\\u{9B}2Jb\nX-Tab: a\tb\n"), "\(run)")
    }

    /// The engine keeps a server's own phrase only when it is visible ASCII, space and tab
    /// (StatusLineReasonPhrase): one with a C1 control or ESC is shown as the standard phrase,
    /// in the printed head and in `--check-status`'s warning alike.
    @Test("a reason phrase with a C1 control or ESC is never printed; the standard phrase is, on stdout and in --check-status's warning")
    func aReasonPhraseWithControlsIsNeverPrinted() async throws {
        let server = try await HostileServer.start(
            .answer(status: "404 Not\u{9B}2J\u{1B}]0;pwned\u{07}Found\tx", headers: ["Content-Length: 2"], body: "no"))
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["--check-status", "-p", "h", "http://127.0.0.1:\(server.port)/"])
        #expect(run.status == 4, "\(run)")
        let isControl = { (scalar: Unicode.Scalar) in
            scalar.value < 0x20 && scalar != "\n" && scalar != "\t" || (0x7F..<0xA0).contains(scalar.value)
        }
        #expect(!run.output.unicodeScalars.contains(where: isControl), "\(run)")
        #expect(!run.errors.unicodeScalars.contains(where: isControl), "\(run)")
        #expect(run.output.hasPrefix("HTTP/1.1 404 Not Found\n"), "\(run)")
        #expect(run.errors.contains("warning: HTTP 404 Not Found\n"), "\(run)")
    }
}
