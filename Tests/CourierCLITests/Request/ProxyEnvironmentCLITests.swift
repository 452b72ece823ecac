import CourierTestServer
import Foundation
import Testing

/// courier follows http_proxy/https_proxy/all_proxy/no_proxy from its environment by default,
/// as curl does; an explicit --proxy wins.
@Suite("courier and proxy environment variables")
struct ProxyEnvironmentCLITests {
    @Test("http_proxy from the environment is used; NO_PROXY bypasses it; --proxy wins")
    func honoursTheEnvironment() async throws {
        let proxy = try await TestProxyServer.start()
        let other = try await TestProxyServer.start()
        let server = try await TestServer.start()
        defer {
            Task {
                try await proxy.shutdown()
                try await other.shutdown()
                try await server.shutdown()
            }
        }
        let url = server.baseURL.absoluteString + "/get"
        let environment = ["http_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "", "NO_PROXY": ""]
        let viaEnvironment = try await CourierProcess.run([url, "via==env"], environment: environment)
        #expect(viaEnvironment.status == 0, "\(viaEnvironment)")
        #expect(proxy.requestLines == ["GET \(url)?via=env HTTP/1.1"])

        let bypassed = try await CourierProcess.run(
            [url], environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "127.0.0.1"])
        #expect(bypassed.status == 0, "\(bypassed)")
        #expect(proxy.requestLines.count == 1)

        let explicit = try await CourierProcess.run(["--proxy", "http://127.0.0.1:\(other.port)", url], environment: environment)
        #expect(explicit.status == 0, "\(explicit)")
        #expect(proxy.requestLines.count == 1)
        #expect(other.requestLines == ["GET \(url) HTTP/1.1"])
    }

    @Test("all_proxy may name a SOCKS5 proxy")
    func socksFromTheEnvironment() async throws {
        let socks = try await TestSOCKSProxyServer.start()
        let server = try await TestServer.start()
        defer {
            Task {
                try await socks.shutdown()
                try await server.shutdown()
            }
        }
        let run = try await CourierProcess.run(
            ["http://localhost:\(server.port)/get"],
            environment: ["all_proxy": "socks5h://127.0.0.1:\(socks.port)", "no_proxy": "", "NO_PROXY": ""])
        #expect(run.status == 0, "\(run)")
        #expect(socks.requests.map(\.host) == ["localhost"])
    }
}

extension ProxyEnvironmentCLITests {
    @Test("a SOCKS5 proxy refusing the password: exit 7, the proxy and its answer named")
    func refusedSOCKSPassword() async throws {
        let socks = try await TestSOCKSProxyServer.start(credentials: ("ada", "secret"))
        defer { Task { try await socks.shutdown() } }
        let run = try await CourierProcess.run(
            ["http://localhost:1/get"],
            environment: ["all_proxy": "socks5h://ada:wrong@127.0.0.1:\(socks.port)", "no_proxy": "", "NO_PROXY": ""])
        #expect(run.status == 7, "\(run)")
        #expect(run.errors.contains("127.0.0.1:\(socks.port)"), "\(run)")
        #expect(run.errors.contains("refused the user name and password"), "\(run)")
    }
}
