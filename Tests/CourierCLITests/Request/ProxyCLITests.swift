import CourierTestServer
import Foundation
import Testing

/// `--proxy` against the test server's forward proxy.
@Suite("courier --proxy")
struct ProxyCLITests {
    @Test("http and https requests go through the proxy; credentials in the URL authenticate")
    func throughTheProxy() async throws {
        let expected = "Basic " + Data("ada:se cret".utf8).base64EncodedString()
        try await TestProxyServer.withRunning(requiredAuthorization: expected) { proxy in
            try await Self.withServers { server, tlsServer in
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
        }
    }

    @Test("a proxy that is not an http, socks5 or socks5h URL is a usage error")
    func badProxy() async throws {
        for bad in ["ftp://127.0.0.1:1080", "socks4://127.0.0.1:1080", "socks5h://", "http://127.0.0.1:99999"] {
            let run = try await CourierProcess.run(["--proxy", bad, "http://127.0.0.1:1/"])
            #expect(run.status == 2, "\(bad): \(run)")
            #expect(run.errors.contains("--proxy"), "\(bad): \(run)")
        }
    }

    @Test("--proxy socks5h:// sends the host name to the proxy, with user:password@; socks5:// is accepted too")
    func throughASOCKSProxy() async throws {
        try await TestSOCKSProxyServer.withRunning(credentials: ("ada", "se cret")) { socks in
            try await Self.withServers { server, tlsServer in
                let proxyURL = "socks5h://ada:se%20cret@127.0.0.1:\(socks.port)"
                // The environment names another proxy: --proxy wins.
                let environment = ["all_proxy": "http://127.0.0.1:1", "no_proxy": "", "NO_PROXY": ""]
                let plain = try await CourierProcess.run(
                    ["--proxy", proxyURL, "http://localhost:\(server.port)/get", "via==socks"], environment: environment)
                #expect(plain.status == 0, "\(plain)")
                #expect((try plain.json()["args"] as? [String: String]) == ["via": "socks"])

                let caFile = try TLSCLITests.rootCAFile()
                let secure = try await CourierProcess.run(
                    ["--proxy", proxyURL, "--verify", caFile.path, "https://localhost:\(tlsServer.port)/get"], environment: environment)
                #expect(secure.status == 0, "\(secure)")

                let local = try await CourierProcess.run(
                    ["--proxy", "socks5://ada:se%20cret@127.0.0.1:\(socks.port)", "http://127.0.0.1:\(server.port)/get"],
                    environment: environment)
                #expect(local.status == 0, "\(local)")

                #expect(socks.requests.map(\.host) == ["localhost", "localhost", "127.0.0.1"])
                #expect(socks.requests.map(\.addressType) == [.domainName, .domainName, .ipv4])
                #expect(socks.requests.allSatisfy { $0.username == "ada" })

                let refused = try await CourierProcess.run(
                    ["--proxy", "socks5h://ada:wrong@127.0.0.1:\(socks.port)", "http://localhost:\(server.port)/get"])
                #expect(refused.status == 7, "\(refused)")
                #expect(refused.errors.contains("refused the user name and password"), "\(refused)")
            }
        }
    }

    /// Runs `body` with a plain and a TLS test server, both shut down (awaited) after it.
    static func withServers(_ body: (TestServer, TestServer) async throws -> Void) async throws {
        try await TestServer.withRunning { server in
            try await TestServer.withRunning(.init(tls: .valid)) { tlsServer in try await body(server, tlsServer) }
        }
    }
}
