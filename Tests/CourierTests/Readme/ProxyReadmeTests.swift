import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Proxies chosen from curl's environment variables (SOCKS5 with remote DNS for https), with a
/// URLSessionManager, against the test server and its proxies (the article's version, with an
/// HTTPSessionManager, is `ProxyDocumentationExamples`).
@Suite("README proxies")
struct ProxyReadmeTests {
    @Test("the README's proxy example")
    func readmeProxyExample() async throws {
        try await TestSOCKSProxyServer.withRunning(credentials: ("ada", "secret")) { socks in
            try await TestProxyServer.withRunning { httpProxy in
                try await TestServer.withRunning(.init(tls: .valid)) { server in
                    let port = server.port
                    // The example begins (plus the test CA as a trust root)
                    var configuration = SessionConfiguration()
                    configuration.proxyEnvironment = ProxyEnvironment(environment: [
                        "https_proxy": "socks5h://ada:secret@127.0.0.1:\(socks.port)",  // the proxy resolves the name
                        "http_proxy": "http://127.0.0.1:\(httpProxy.port)",             // lower case only, as in curl
                        "no_proxy": "internal.example, 10.0.0.0/8, [::1]:8080",         // suffixes, CIDR, ports
                    ])  // or .process
                    configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
                    let manager = URLSessionManager(configuration: configuration)
                    let (_, response) = try await manager.data(for: URLRequest(url: try #require(URL(string: "https://localhost:\(port)/get"))))
                    print(response.statusCode)  // 200: TLS runs end to end with the origin (the security policy sees its chain)
                    // The example ends
                    #expect(response.statusCode == 200)
                    #expect(socks.requests.map(\.host) == ["localhost"])
                    #expect(httpProxy.requestLines.isEmpty)
                }
            }
        }
    }
}
