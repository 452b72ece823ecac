import Testing

@testable import CourierEngine

@Suite("RequestTarget and header validation")
struct RequestTargetTests {
    @Test func targetIsTakenVerbatim() throws {
        let target = try RequestTarget(string: "http://example.com:8080/a%2Fb/c d?x=%20&y=[1]#frag".replacingOccurrences(of: " ", with: "%20"))
        #expect(target.target == "/a%2Fb/c%20d?x=%20&y=[1]")
        #expect(target.host == "example.com")
        #expect(target.port == 8080)
        #expect(target.hostHeader == "example.com:8080")
    }

    @Test func defaultPortsAndEmptyPath() throws {
        let http = try RequestTarget(string: "http://h")
        #expect(http.port == 80 && http.target == "/" && http.hostHeader == "h")
        let https = try RequestTarget(string: "HTTPS://h?q=1")
        #expect(https.scheme == .https && https.port == 443 && https.target == "/?q=1")
    }

    @Test func ipv6Literal() throws {
        let target = try RequestTarget(string: "http://[::1]:9000/x")
        #expect(target.host == "::1")
        #expect(target.hostHeader == "[::1]:9000")
        #expect(target.hostIsIPAddress)
    }

    @Test func userInfoIsNotTheHost() throws {
        let target = try RequestTarget(string: "http://user:pass@h:81/")
        #expect(target.host == "h" && target.port == 81)
    }

    @Test func badInputIsATypedError() {
        #expect(throws: EngineError.unsupportedScheme("ftp")) { try RequestTarget(string: "ftp://h/") }
        #expect(throws: EngineError.invalidURL("no-scheme")) { try RequestTarget(string: "no-scheme") }
        #expect(throws: EngineError.invalidURL("http://h:99999/")) { try RequestTarget(string: "http://h:99999/") }
        #expect(throws: EngineError.invalidURL("http:///path")) { try RequestTarget(string: "http:///path") }
    }

    /// The parse reads the URL string's own UTF-8 storage (small, heap and non-ASCII strings
    /// alike): every form gives the host, port, target and Host header read off its bytes.
    @Test func everyURLFormIsCutFromTheStringsOwnBytes() throws {
        let cases: [(url: String, host: String, port: Int, target: String, hostHeader: String)] = [
            ("http://[fe80::1%25eth0]:8080/p?q#f", "fe80::1%25eth0", 8080, "/p?q", "[fe80::1%25eth0]:8080"),
            ("http://[::1]", "::1", 80, "/", "[::1]"),
            ("http://us%40er:p@ss@h/x", "h", 80, "/x", "h"),
            ("https://h?only", "h", 443, "/?only", "h"),
            ("http://h#frag", "h", 80, "/", "h"),
            ("http://h/#frag?x", "h", 80, "/", "h"),
            ("http://h/\u{FC}?\u{E4}=\u{F6}#\u{DF}", "h", 80, "/\u{FC}?\u{E4}=\u{F6}", "h"),
            ("http://b\u{FC}cher.example:81/", "b\u{FC}cher.example", 81, "/", "b\u{FC}cher.example:81"),
            ("http://h/a?next=http://x/", "h", 80, "/a?next=http://x/", "h"),
            ("http://h:/x", "h", 80, "/x", "h"),
            ("http://h/" + String(repeating: "a", count: 200), "h", 80, "/" + String(repeating: "a", count: 200), "h"),
        ]
        for item in cases {
            let target = try RequestTarget(string: item.url)
            #expect(target.host == item.host, "\(item.url)")
            #expect(target.port == item.port, "\(item.url)")
            #expect(target.target == item.target, "\(item.url)")
            #expect(target.hostHeader == item.hostHeader, "\(item.url)")
        }
        for bad in ["", "ab", "://h", "http://", "http://[::1", "http://[::1]x/", "http://h/a b", "http://h/\u{0}"] {
            #expect(throws: EngineError.invalidURL(bad), "\(bad.debugDescription)") { try RequestTarget(string: bad) }
        }
    }

    @Test func headerInjectionIsRejected() {
        #expect(throws: EngineError.self) {
            try HeaderValidation.validate(["X-Evil": "a\r\nInjected: 1"])
        }
        #expect(throws: EngineError.self) {
            try HeaderValidation.validate(["Bad Name": "v"])
        }
        #expect(throws: EngineError.self) {
            try HeaderValidation.validate(["X-Nul": "a\u{0}b"])
        }
        #expect(throws: Never.self) {
            try HeaderValidation.validate(["X-Fine": "value with spaces, commas; and = signs"])
        }
    }
}
