import CourierEngine
import Foundation
import Testing

@testable import courier

/// `--proxy` values read without I/O: the library's proxy URLs (`EngineProxy(url:)`), curl's
/// default port.
@Suite("--proxy argument")
struct ProxyArgumentTests {
    @Test("http, socks5 and socks5h URLs, credentials percent-decoded, IPv6 literals, curl's port 1080 when none is given")
    func parses() throws {
        #expect(try RequestCommand.parseProxy("socks5h://ada:se%20cret@127.0.0.1:1081")
            == EngineProxy(host: "127.0.0.1", port: 1081, username: "ada", password: "se cret", kind: .socks5h))
        #expect(try RequestCommand.parseProxy("SOCKS5://proxy.local") == EngineProxy(host: "proxy.local", port: 1080, kind: .socks5))
        #expect(try RequestCommand.parseProxy("127.0.0.1:3128") == EngineProxy(host: "127.0.0.1", port: 3128))
        #expect(try RequestCommand.parseProxy("http://[::1]:8080") == EngineProxy(host: "::1", port: 8080))
        // As curl (and http_proxy here): a proxy without a port is on 1080.
        #expect(try RequestCommand.parseProxy("http://proxy.local") == EngineProxy(host: "proxy.local", port: 1080))
        #expect(try RequestCommand.parseProxy("proxy.local") == EngineProxy(host: "proxy.local", port: 1080))
    }

    @Test("other schemes, no host, a port out of range: errors naming --proxy and the problem")
    func refuses() {
        for (text, problem) in [
            ("ftp://h:1", "the scheme ftp is not supported"), ("socks4://h:1", "the scheme socks4"),
            ("socks5h://", "is not a"), ("http://h:99999", "out of range"), ("http://h:0", "out of range"),
        ] {
            do {
                _ = try RequestCommand.parseProxy(text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect("\(error)".contains("--proxy"), "\(text): \(error)")
                #expect("\(error)".contains(problem), "\(text): \(error)")
            }
        }
    }
}
