import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The examples of the "Proxies" article, run against the in-process test server and its
/// HTTP and SOCKS5 test proxies.
@Suite("Documentation: Proxies")
struct ProxyDocumentationExamples {
    @Test("curl's environment variables, SOCKS5 with remote DNS")
    func environment() async throws {
        try await TestSOCKSProxyServer.withRunning(credentials: ("ada", "secret")) { socks in
            try await TestProxyServer.withRunning { httpProxy in
                try await TestServer.withRunning(.init(tls: .valid)) { server in
                    var configuration = SessionConfiguration()
                    configuration.proxyEnvironment = ProxyEnvironment(environment: [
                        "https_proxy": "socks5h://ada:secret@127.0.0.1:\(socks.port)",  // the proxy resolves the name
                        "http_proxy": "http://127.0.0.1:\(httpProxy.port)",             // lower case only, as in curl
                        "no_proxy": "internal.example, 10.0.0.0/8, [::1]:8080",         // suffixes, CIDR, ports
                    ])  // or .process
                    configuration.tls.additionalTrustRootsDER = [server.certificateAuthority.rootCertificateDER]  // the test CA
                    let manager = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(server.port)"), configuration: configuration)
                    let (_, response) = try await manager.get("get")
                    print(response.statusCode)  // 200: TLS runs end to end with the origin (the security policy sees its chain)

                    #expect(response.statusCode == 200)
                    #expect(socks.requests.map(\.host) == ["localhost"])
                    #expect(httpProxy.requestLines.isEmpty)
                }
            }
        }
    }

    @Test("one proxy for everything")
    func oneProxy() async throws {
        try await TestProxyServer.withRunning { proxy in
            try await TestServer.withRunning { server in
                // One proxy for every request of the session.
                var configuration = SessionConfiguration()
                configuration.proxy = EngineProxy(host: "127.0.0.1", port: proxy.port)   // http:// in absolute form, https:// through CONNECT
                let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
                let (_, response) = try await manager.get("get")
                print(response.statusCode)   // 200, through the proxy

                #expect(response.statusCode == 200)
                #expect(proxy.requestLines.count == 1)
            }
        }
    }
}
