import CourierEngine
import Testing

/// `http_proxy`/`https_proxy`/`all_proxy`/`no_proxy` with curl's rules, as plain values.
@Suite("Proxy environment")
struct ProxyEnvironmentTests {
    struct Case: Sendable, CustomStringConvertible {
        let noProxy: String
        let host: String
        let port: Int
        let bypassed: Bool
        var description: String { "no_proxy=\(noProxy) \(host):\(port) -> \(bypassed)" }
    }

    static let noProxyTable: [Case] = [
        Case(noProxy: "*", host: "anything.example", port: 80, bypassed: true),
        Case(noProxy: "", host: "example.com", port: 80, bypassed: false),
        // Domain suffixes, with and without a leading dot, case-insensitive.
        Case(noProxy: "example.com", host: "example.com", port: 443, bypassed: true),
        Case(noProxy: "example.com", host: "www.EXAMPLE.com", port: 443, bypassed: true),
        Case(noProxy: "example.com", host: "badexample.com", port: 443, bypassed: false),
        Case(noProxy: ".example.com", host: "example.com", port: 80, bypassed: true),
        Case(noProxy: ".example.com", host: "a.b.example.com", port: 80, bypassed: true),
        Case(noProxy: "example.com", host: "example.com.", port: 80, bypassed: true),
        Case(noProxy: "EXAMPLE.COM", host: "example.com", port: 80, bypassed: true),
        // Lists: commas and spaces, empty entries ignored.
        Case(noProxy: "foo.test, ,bar.test  baz.test", host: "baz.test", port: 80, bypassed: true),
        Case(noProxy: "foo.test,bar.test", host: "qux.test", port: 80, bypassed: false),
        // IP literals and CIDR ranges (only against IP-literal hosts).
        Case(noProxy: "127.0.0.1", host: "127.0.0.1", port: 8080, bypassed: true),
        Case(noProxy: "127.0.0.1", host: "127.0.0.2", port: 8080, bypassed: false),
        Case(noProxy: "10.0.0.0/8", host: "10.20.30.40", port: 80, bypassed: true),
        Case(noProxy: "10.0.0.0/8", host: "11.0.0.1", port: 80, bypassed: false),
        Case(noProxy: "192.168.1.0/25", host: "192.168.1.127", port: 80, bypassed: true),
        Case(noProxy: "192.168.1.0/25", host: "192.168.1.128", port: 80, bypassed: false),
        Case(noProxy: "0.0.0.0/0", host: "8.8.8.8", port: 80, bypassed: true),
        Case(noProxy: "10.0.0.0/8", host: "ten.example", port: 80, bypassed: false),
        Case(noProxy: "127.0.0.1", host: "localhost", port: 80, bypassed: false),
        // The other numeric spellings of an IPv4 host are that address (curl goes direct too).
        Case(noProxy: "127.0.0.1", host: "127.1", port: 80, bypassed: true),
        Case(noProxy: "127.0.0.1", host: "2130706433", port: 80, bypassed: true),
        Case(noProxy: "127.0.0.1", host: "0x7f000001", port: 80, bypassed: true),
        Case(noProxy: "127.0.0.1", host: "0X7F.0.0.1", port: 80, bypassed: true),
        Case(noProxy: "127.0.0.1", host: "127.000.000.001", port: 80, bypassed: true),
        Case(noProxy: "127.0.0.1", host: "0177.0.0.1", port: 80, bypassed: true),
        Case(noProxy: "127.0.0.0/8", host: "127.65530", port: 80, bypassed: true),
        Case(noProxy: "127.0.0.1", host: "127.2", port: 80, bypassed: false),
        Case(noProxy: "127.0.0.1", host: "2130706434", port: 80, bypassed: false),
        Case(noProxy: "127.0.0.1", host: "deadbeef.example", port: 80, bypassed: false),
        Case(noProxy: "127.0.0.1", host: "0x7g000001", port: 80, bypassed: false),
        // Hostile numbers: past 32 bits, too many parts, a part past its width, empty parts.
        Case(noProxy: "127.0.0.1", host: "4294967296", port: 80, bypassed: false),
        Case(noProxy: "0.0.0.0/0", host: "99999999999999999999", port: 80, bypassed: false),
        Case(noProxy: "127.0.0.1", host: "127.0.0.1.1", port: 80, bypassed: false),
        Case(noProxy: "127.0.0.1", host: "127.256.0.1", port: 80, bypassed: false),
        Case(noProxy: "127.0.0.1", host: "127..1", port: 80, bypassed: false),
        // IPv6, bare or bracketed, and ranges; never matches across families.
        Case(noProxy: "::1", host: "::1", port: 80, bypassed: true),
        Case(noProxy: "[::1]", host: "[::1]", port: 80, bypassed: true),
        Case(noProxy: "fd00::/8", host: "fd12:3456::1", port: 80, bypassed: true),
        Case(noProxy: "fd00::/8", host: "fe80::1", port: 80, bypassed: false),
        Case(noProxy: "::ffff:0:0/96", host: "127.0.0.1", port: 80, bypassed: false),
        // Ports: host:port bypasses that port only.
        Case(noProxy: "example.com:8080", host: "example.com", port: 8080, bypassed: true),
        Case(noProxy: "example.com:8080", host: "example.com", port: 443, bypassed: false),
        Case(noProxy: "[::1]:8080", host: "::1", port: 8080, bypassed: true),
        Case(noProxy: "[::1]:8080", host: "::1", port: 8081, bypassed: false),
        Case(noProxy: "127.0.0.1:99", host: "127.0.0.1", port: 99, bypassed: true),
        // Nonsense entries match nothing.
        Case(noProxy: "example.com/8", host: "example.com", port: 80, bypassed: false),
        Case(noProxy: "10.0.0.0/40", host: "10.0.0.1", port: 80, bypassed: false),
        Case(noProxy: "example.com:http", host: "example.com", port: 80, bypassed: false),
        // Hostile prefix lengths and ports match nothing (and don't trap).
        Case(noProxy: "10.0.0.0/999", host: "10.0.0.1", port: 80, bypassed: false),
        Case(noProxy: "10.0.0.0/-1", host: "10.0.0.1", port: 80, bypassed: false),
        Case(noProxy: "10.0.0.0/99999999999999999999999", host: "10.0.0.1", port: 80, bypassed: false),
        Case(noProxy: "::/129", host: "::1", port: 80, bypassed: false),
        Case(noProxy: "[::1/-1]", host: "::1", port: 80, bypassed: false),
        Case(noProxy: "example.com:99999", host: "example.com", port: 99999, bypassed: false),
        Case(noProxy: "example.com:-1", host: "example.com", port: -1, bypassed: false),
        Case(noProxy: "[::1]:65536", host: "::1", port: 65536, bypassed: false),
        Case(noProxy: "[::1", host: "::1", port: 80, bypassed: false),
    ]

    @Test(arguments: noProxyTable)
    func noProxyMatching(_ entry: Case) {
        #expect(ProxyEnvironment.bypasses(host: entry.host, port: entry.port, noProxy: entry.noProxy) == entry.bypassed)
    }

    @Test func variablesFollowCurl() throws {
        // Lower case wins; upper-case HTTP_PROXY is ignored (httpoxy); empty values are unset.
        let environment = ProxyEnvironment(environment: [
            "HTTP_PROXY": "http://evil.test:1", "https_proxy": "http://lower.test:3128",
            "HTTPS_PROXY": "http://upper.test:3128", "ALL_PROXY": "socks5h://all.test", "no_proxy": "",
            "NO_PROXY": "internal.test",
        ])
        #expect(environment.httpProxy == nil)
        #expect(environment.httpsProxy == "http://lower.test:3128")
        #expect(environment.allProxy == "socks5h://all.test")
        #expect(environment.noProxy == "internal.test")
        // http falls back to all_proxy; port 1080 by default.
        #expect(
            try environment.proxy(scheme: "http", host: "example.com", port: 80)
                == EngineProxy(host: "all.test", port: 1080, kind: .socks5h))
        #expect(
            try environment.proxy(scheme: "https", host: "example.com", port: 443)
                == EngineProxy(host: "lower.test", port: 3128))
        #expect(try environment.proxy(scheme: "https", host: "a.internal.test", port: 443) == nil)
        #expect(ProxyEnvironment(environment: ["HTTPS_PROXY": "upper.test:8"]).httpsProxy == "upper.test:8")
        #expect(try ProxyEnvironment(environment: [:]).proxy(scheme: "http", host: "a", port: 80) == nil)
    }

    @Test func proxyURLs() throws {
        #expect(try EngineProxy(url: "proxy.test") == EngineProxy(host: "proxy.test", port: 1080))
        #expect(
            try EngineProxy(url: "socks5://ada:p%40ss@127.0.0.1:9050")
                == EngineProxy(host: "127.0.0.1", port: 9050, username: "ada", password: "p@ss", kind: .socks5))
        #expect(try EngineProxy(url: "SOCKS5H://[::1]:1080") == EngineProxy(host: "::1", port: 1080, kind: .socks5h))
        #expect(try EngineProxy(url: "http://[::1]:3128").host == "::1")
        for bad in ["socks4://proxy.test:1080", "https://proxy.test", "http://", "http://proxy.test:0"] {
            #expect(throws: EngineError.self, "\(bad)") { try EngineProxy(url: bad) }
        }
        // Hostile values: a clear error or the right answer, never a silently wrong proxy.
        for bad in [
            "http://pro xy.test:8080", "http://proxy.test:65536", "http://proxy.test:99999", "http://proxy.test:-1",
            "http://proxy.test:99999999999999999999", "http://::1:8080", "http://[::1", " ",
        ] {
            #expect(throws: EngineError.self, "\(bad)") { try EngineProxy(url: bad) }
        }
        #expect(
            try ProxyEnvironment(environment: ["https_proxy": " http://proxy.test:8080\t"])
                .proxy(scheme: "https", host: "a", port: 443) == EngineProxy(host: "proxy.test", port: 8080))
        // '@' and ':' in the password: percent-encoded they arrive intact; bare, the value is
        // either refused or read as curl reads it (user up to the first ':', host after the last '@').
        #expect(
            try EngineProxy(url: "http://ada:p%40s%3As@proxy.test:8080")
                == EngineProxy(host: "proxy.test", port: 8080, username: "ada", password: "p@s:s"))
        if let bare = try? EngineProxy(url: "http://ada:p@s:s@proxy.test:8080") {
            #expect(bare == EngineProxy(host: "proxy.test", port: 8080, username: "ada", password: "p@s:s"))
        }
        #expect(try EngineProxy(url: "[fd00::1]:3128") == EngineProxy(host: "fd00::1", port: 3128))
        // A bad variable names itself.
        let error = #expect(throws: EngineError.self) {
            try ProxyEnvironment(environment: ["https_proxy": "ftp://x"]).proxy(scheme: "https", host: "a", port: 443)
        }
        #expect(error?.description.contains("https_proxy") == true)
    }

    @Test(arguments: [
        "http://ada:s3cret@proxy.test:70000", "socks4://ada:s3cret@proxy.test:1080", "http://ada:s3cret@pro xy.test:8080",
        "ada:s3cret@proxy.test:-1", "http://ada:s3cret@proxy.test:99999999999999999999",
        "http://ada:s3cret@[::1:8080",
    ])
    func aRefusedProxyURLDoesNotRepeatItsCredentials(value: String) throws {
        // An environment value is refused with a message that ends up in logs: it names the
        // variable and the proxy, never the password (nor the user name) written in the value.
        let error = #expect(throws: EngineError.self) {
            try ProxyEnvironment(environment: ["https_proxy": value]).proxy(scheme: "https", host: "a", port: 443)
        }
        let message = try #require(error).description
        #expect(message.contains("https_proxy"), "\(message)")
        #expect(!message.contains("s3cret"), "\(message)")
        #expect(!message.contains("ada"), "\(message)")
    }
}
