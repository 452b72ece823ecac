import CourierTestServer
import Foundation
import Testing

/// `--proxy` against the test server's forward proxy.
@Suite("courier --proxy")
struct ProxyCLITests {
    @Test("http and https requests go through the proxy; credentials in the URL authenticate")
    func throughTheProxy() async throws {
        let expected = "Basic " + Data("ada:se cret".utf8).base64EncodedString()
        let proxy = try await TestProxyServer.start(requiredAuthorization: expected)
        let server = try await TestServer.start()
        let tlsServer = try await TestServer.start(.init(tls: .valid))
        defer {
            Task {
                try await proxy.shutdown()
                try await server.shutdown()
                try await tlsServer.shutdown()
            }
        }
        let proxyURL = "http://ada:se%20cret@127.0.0.1:\(proxy.port)"
        let plain = try await CourierProcess.run(["--proxy", proxyURL, server.baseURL.absoluteString + "/get", "via==proxy"])
        #expect(plain.status == 0, "\(plain)")
        #expect((try plain.json()["args"] as? [String: String]) == ["via": "proxy"])

        let caFile = try TLSCLITests.rootCAFile()
        let secure = try await CourierProcess.run(
            ["--proxy", proxyURL, "--verify", caFile.path, "https://localhost:\(tlsServer.port)/get"])
        #expect(secure.status == 0, "\(secure)")
        #expect(proxy.requestLines.contains("CONNECT localhost:\(tlsServer.port) HTTP/1.1"))

        let refused = try await CourierProcess.run(
            ["--proxy", "http://127.0.0.1:\(proxy.port)", "--verify", caFile.path, "https://localhost:\(tlsServer.port)/get"])
        #expect(refused.status == 7, "\(refused)")
        #expect(refused.errors.contains("407"), "\(refused)")
    }

    @Test("a proxy that is not an http URL is a usage error")
    func badProxy() async throws {
        let run = try await CourierProcess.run(["--proxy", "socks5://127.0.0.1:1080", "http://127.0.0.1:1/"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--proxy"), "\(run)")
    }
}
