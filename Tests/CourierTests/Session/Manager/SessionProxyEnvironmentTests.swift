import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Sessions whose proxies come from environment variables given as a dictionary (the process
/// environment is never touched): HTTP and SOCKS5 proxies, `no_proxy`, curl's httpoxy rule,
/// TLS with pinning through SOCKS5, and a refused SOCKS password as a typed error.
@Suite("Session proxies from the environment")
struct SessionProxyEnvironmentTests {
    static func manager(_ environment: [String: String], trustTestCA: Bool = false) -> URLSessionManager {
        var configuration = SessionConfiguration()
        configuration.proxyEnvironment = ProxyEnvironment(environment: environment)
        if trustTestCA {
            configuration.tls.additionalTrustRootsDER = [(try? TestCertificateAuthority.shared.rootCertificateDER) ?? []]
        }
        return URLSessionManager(configuration: configuration)
    }

    static func run(_ manager: URLSessionManager, _ url: URL) async -> CompletionRecorder.Call? {
        let recorder = CompletionRecorder()
        manager.dataTask(with: URLRequest(url: url), completionHandler: recorder.handler).resume()
        await recorder.wait()
        return recorder.first
    }

    @Test func httpProxyFromTheEnvironmentAndNoProxy() async throws {
        try await TestProxyServer.withRunning { proxy in
            try await TestServer.withRunning { server in
                let url = server.sessionURL("/get?via=env")
                let proxied = Self.manager(["http_proxy": "http://127.0.0.1:\(proxy.port)"])
                #expect(await Self.run(proxied, url)?.response?.statusCode == 200)
                #expect(proxy.requestLines == ["GET \(url.absoluteString) HTTP/1.1"])
                // no_proxy names the host (here as a CIDR range): straight to the server.
                let bypassed = Self.manager(["http_proxy": "http://127.0.0.1:\(proxy.port)", "NO_PROXY": "127.0.0.0/8"])
                #expect(await Self.run(bypassed, url)?.response?.statusCode == 200)
                // Upper-case HTTP_PROXY is ignored, as curl does (httpoxy).
                let upper = Self.manager(["HTTP_PROXY": "http://127.0.0.1:\(proxy.port)"])
                #expect(await Self.run(upper, url)?.response?.statusCode == 200)
                #expect(proxy.requestLines.count == 1)
            }
        }
    }

    @Test func httpsThroughSOCKS5WithPinning() async throws {
        try await TestSOCKSProxyServer.withRunning(credentials: ("ada", "s3cret")) { socks in
            try await TestServer.withRunning(.init(tls: .valid)) { server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
                let environment = ["https_proxy": "socks5h://ada:s3cret@127.0.0.1:\(socks.port)"]
                let manager = Self.manager(environment, trustTestCA: true)
                let leaf = try Certificate(
                    derEncoded: Data(try #require(try TestCertificateAuthority.shared.serverChain(.valid).certificatesDER.first)))
                try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [leaf]))
                #expect(await Self.run(manager, url)?.response?.statusCode == 200)
                #expect(socks.requests == [.init(host: "localhost", port: server.port, addressType: .domainName, username: "ada")])
                // A wrong pin is still judged against the origin's chain through the proxy.
                let pinnedWrong = Self.manager(environment, trustTestCA: true)
                let stranger = try Certificate(
                    derEncoded: Data(try #require(try TestCertificateAuthority.shared.serverChain(.selfSigned).certificatesDER.first)))
                try pinnedWrong.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [stranger]))
                let rejected = await Self.run(pinnedWrong, url)
                guard case .serverTrustRejected = rejected?.error as? CourierError else {
                    Issue.record("expected serverTrustRejected, got \(String(describing: rejected?.error))")
                    return
                }
            }
        }
    }

    @Test func aRefusedSOCKSPasswordIsATypedError() async throws {
        try await TestSOCKSProxyServer.withRunning(credentials: ("ada", "s3cret")) { socks in
            try await TestServer.withRunning { server in
                let manager = Self.manager(["all_proxy": "socks5://ada:nope@127.0.0.1:\(socks.port)"])
                let call = await Self.run(manager, server.sessionURL("/get"))
                guard case .engine(.proxyFailed(let proxy, _, let refusal)) = call?.error as? CourierError else {
                    Issue.record("expected proxyFailed, got \(String(describing: call?.error))")
                    return
                }
                #expect(proxy == "127.0.0.1:\(socks.port)")
                #expect(refusal == .authenticationRefused(status: 1))
                #expect(socks.requests.isEmpty)
            }
        }
    }
}
