import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// Requests through a forward proxy: absolute-form for http, a CONNECT tunnel for https
/// (TLS and the trust check stay end to end with the origin), Basic proxy authentication.
@Suite("HTTPEngine through a proxy")
struct EngineProxyTests {
    static func configuration(_ proxy: TestProxyServer, user: String? = nil, password: String? = nil) throws -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.proxy = EngineProxy(host: "127.0.0.1", port: proxy.port, username: user, password: password)
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        return configuration
    }

    static func json(_ response: CollectedResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
    }

    @Test func plainHTTPGoesInAbsoluteForm() async throws {
        try await TestProxyServer.withRunning { proxy in
            try await withEngine(engine: try Self.configuration(proxy)) { engine, server in
                let response = try await engine.collect(EngineRequest(url: server.url("/get?via=proxy")))
                #expect(response.head.status == .ok)
                #expect((try Self.json(response)["args"] as? [String: String]) == ["via": "proxy"])
                // Two requests, one proxy connection kept alive.
                let again = try await engine.collect(EngineRequest(url: server.url("/get?n=2")))
                #expect(again.head.status == .ok)
                #expect(proxy.requestLines.first == "GET http://127.0.0.1:\(server.port)/get?via=proxy HTTP/1.1")
                #expect(server.connectionsAccepted == 1)
            }
        }
    }

    @Test func httpsTunnelsWithConnectAndKeepsTheTrustCheck() async throws {
        try await TestProxyServer.withRunning { proxy in
            try await withEngine(server: .init(tls: .valid), engine: try Self.configuration(proxy)) { engine, server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
                let response = try await engine.collect(EngineRequest(url: url))
                #expect(response.head.status == .ok)
                #expect(response.metrics.tlsProtocolVersion == "TLSv1.3")
                #expect(proxy.requestLines == ["CONNECT localhost:\(server.port) HTTP/1.1"])
            }
            // The origin's chain is still judged: a wrong-host certificate is refused through the tunnel.
            try await withEngine(server: .init(tls: .wrongHost), engine: try Self.configuration(proxy)) { engine, server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
                let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
                guard case .serverTrustRejected = error else {
                    Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                    return
                }
            }
        }
    }

    @Test func proxyAuthentication() async throws {
        let expected = "Basic " + Data("ada:secret".utf8).base64EncodedString()
        try await TestProxyServer.withRunning(requiredAuthorization: expected) { proxy in
            try await withEngine(server: .init(tls: .valid), engine: try Self.configuration(proxy)) { engine, server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
                let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
                guard case .cannotConnect(_, _, let reason) = error else {
                    Issue.record("expected cannotConnect, got \(String(describing: error))")
                    return
                }
                #expect(reason.contains("407"), "\(reason)")
                // Plain http: the proxy's 407 is the response.
                let plainURL = try #require(URL(string: "http://127.0.0.1:\(server.port)/get"))
                let plain = try await engine.collect(EngineRequest(url: plainURL))
                #expect(plain.head.status.code == 407)
            }
            try await withEngine(server: .init(tls: .valid), engine: try Self.configuration(proxy, user: "ada", password: "secret")) {
                engine, server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
                #expect(try await engine.collect(EngineRequest(url: url)).head.status == .ok)
            }
        }
    }

    @Test func unreachableOriginBehindTheProxy() async throws {
        try await TestProxyServer.withRunning { proxy in
            let engine = try HTTPEngine(configuration: try Self.configuration(proxy))
            defer { Task { await engine.shutdown() } }
            // Port 1 on loopback refuses: the proxy answers 502 to CONNECT.
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: URL(string: "https://localhost:1/")!)) }
            guard case .cannotConnect(_, _, let reason) = error else {
                Issue.record("expected cannotConnect, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("502"), "\(reason)")
        }
    }

    @Test func proxyItselfUnreachable() async throws {
        var configuration = EngineConfiguration()
        configuration.proxy = EngineProxy(host: "127.0.0.1", port: 1)
        let engine = try HTTPEngine(configuration: configuration)
        defer { Task { await engine.shutdown() } }
        let error = await engineError { _ = try await engine.collect(EngineRequest(url: URL(string: "http://example.invalid/")!)) }
        guard case .cannotConnect(let host, let port, let reason) = error else {
            Issue.record("expected cannotConnect, got \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1" && port == 1)
        #expect(reason.contains("proxy"), "\(reason)")
    }
}
