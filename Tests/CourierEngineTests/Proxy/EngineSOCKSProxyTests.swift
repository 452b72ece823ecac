import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import CourierEngine

/// Requests through a SOCKS5 proxy (the test server's): no auth and username/password,
/// `socks5` resolving names here and `socks5h` sending them, TLS end to end, typed refusals,
/// and proxies picked per request from environment-style settings.
@Suite("HTTPEngine through a SOCKS5 proxy")
struct EngineSOCKSProxyTests {
    static func configuration(
        _ proxy: TestSOCKSProxyServer, kind: EngineProxy.Kind = .socks5h, user: String? = nil, password: String? = nil
    ) throws -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.proxy = EngineProxy(host: "127.0.0.1", port: proxy.port, username: user, password: password, kind: kind)
        configuration.connectTimeout = .seconds(20)
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        return configuration
    }

    static func refusal(_ error: EngineError?) -> ProxyRefusal? {
        guard case .proxyFailed(_, _, let refusal) = error else { return nil }
        return refusal
    }

    @Test func socks5hSendsTheHostName() async throws {
        try await TestSOCKSProxyServer.withRunning { proxy in
            try await withEngine(engine: try Self.configuration(proxy)) { engine, server in
                let url = try #require(URL(string: "http://localhost:\(server.port)/get?via=socks"))
                let response = try await engine.collect(EngineRequest(url: url))
                #expect(response.head.status == .ok)
                let again = try await engine.collect(EngineRequest(url: url))
                #expect(again.head.status == .ok)
                // One SOCKS connection, kept alive; the proxy got the name.
                #expect(
                    proxy.requests
                        == [.init(host: "localhost", port: server.port, addressType: .domainName, username: nil)])
                #expect(server.connectionsAccepted == 1)
            }
        }
    }

    @Test func socks5ResolvesHereAndSendsTheAddress() async throws {
        try await TestSOCKSProxyServer.withRunning { proxy in
            var configuration = try Self.configuration(proxy, kind: .socks5)
            // A name only this client can resolve: the proxy must get its address.
            let loopback = try SocketAddress(ipAddress: "127.0.0.1", port: 0)
            configuration.resolveOverride = { _, port in [(try? SocketAddress(ipAddress: "127.0.0.1", port: port)) ?? loopback] }
            try await withEngine(engine: configuration) { engine, server in
                let url = try #require(URL(string: "http://origin.invalid:\(server.port)/get"))
                #expect(try await engine.collect(EngineRequest(url: url)).head.status == .ok)
                #expect(proxy.requests == [.init(host: "127.0.0.1", port: server.port, addressType: .ipv4, username: nil)])
            }
            // socks5h sends that name, which the proxy can't resolve: host unreachable, typed.
            try await withEngine(engine: try Self.configuration(proxy, kind: .socks5h)) { engine, server in
                let url = try #require(URL(string: "http://origin.invalid:\(server.port)/get"))
                let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
                #expect(Self.refusal(error) == .hostUnreachable, "\(String(describing: error))")
                #expect(proxy.requests.last?.host == "origin.invalid")
                #expect(error?.description.contains("127.0.0.1:\(proxy.port)") == true, "\(String(describing: error))")
            }
        }
    }

    @Test func usernameAndPassword() async throws {
        try await TestSOCKSProxyServer.withRunning(credentials: ("ada", "secret")) { proxy in
            try await withEngine(engine: try Self.configuration(proxy, user: "ada", password: "secret")) { engine, server in
                let url = try #require(URL(string: "http://localhost:\(server.port)/get"))
                #expect(try await engine.collect(EngineRequest(url: url)).head.status == .ok)
                #expect(proxy.requests.first?.username == "ada")
            }
            try await withEngine(engine: try Self.configuration(proxy, user: "ada", password: "wrong")) { engine, server in
                let url = try #require(URL(string: "http://localhost:\(server.port)/get"))
                let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
                #expect(
                    error
                        == .proxyFailed(
                            proxy: "127.0.0.1:\(proxy.port)", target: "localhost:\(server.port)",
                            refusal: .authenticationRefused(status: 1)))
            }
            try await withEngine(engine: try Self.configuration(proxy)) { engine, server in
                let url = try #require(URL(string: "http://localhost:\(server.port)/get"))
                let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
                #expect(Self.refusal(error) == .noAcceptableAuthenticationMethod, "\(String(describing: error))")
            }
            #expect(proxy.requests.count == 1)
        }
    }

    @Test func answersInPiecesAndANamedBoundAddress() async throws {
        try await TestSOCKSProxyServer.withRunning(credentials: ("ada", "secret"), answersInPieces: true) { proxy in
            let configuration = try Self.configuration(proxy, user: "ada", password: "secret")
            try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
                #expect(try await engine.collect(EngineRequest(url: url)).head.status == .ok)
            }
            try await withEngine(engine: configuration) { engine, server in
                let url = try #require(URL(string: "http://localhost:\(server.port)/get"))
                #expect(try await engine.collect(EngineRequest(url: url)).head.status == .ok)
            }
            #expect(proxy.requests.count == 2)
        }
    }

    @Test func replyCodesAreNamed() async throws {
        for (code, expected) in [(UInt8(7), ProxyRefusal.commandNotSupported), (4, .hostUnreachable), (2, .notAllowedByRuleset)] {
            try await TestSOCKSProxyServer.withRunning(forcedReply: code) { proxy in
                try await withEngine(engine: try Self.configuration(proxy)) { engine, server in
                    let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
                    let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
                    #expect(Self.refusal(error) == expected, "\(String(describing: error))")
                }
            }
        }
    }

    @Test func notASOCKSServer() async throws {
        // An HTTP server where the proxy should be: it answers the greeting with HTTP.
        try await withEngine { _, httpServer in
            var configuration = EngineConfiguration()
            configuration.proxy = EngineProxy(host: "127.0.0.1", port: httpServer.port, kind: .socks5)
            configuration.connectTimeout = .seconds(20)
            try await withEngine(engine: configuration) { engine, server in
                let error = await engineError { _ = try await engine.collect(EngineRequest(url: server.url("/get"))) }
                guard case .notASOCKS5Server(let bytes) = Self.refusal(error) else {
                    Issue.record("expected notASOCKS5Server, got \(String(describing: error))")
                    return
                }
                #expect(bytes.first == UInt8(ascii: "H"))
            }
        }
    }

    @Test func httpsThroughSOCKSKeepsTheTrustCheck() async throws {
        try await TestSOCKSProxyServer.withRunning { proxy in
            try await withEngine(server: .init(tls: .valid), engine: try Self.configuration(proxy)) { engine, server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/get"))
                let response = try await engine.collect(EngineRequest(url: url))
                #expect(response.head.status == .ok)
                #expect(response.metrics.tlsProtocolVersion == "TLSv1.3")
                #expect(proxy.requests.map(\.host) == ["localhost"])
            }
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

    @Test func environmentPicksTheProxyPerRequest() async throws {
        try await TestSOCKSProxyServer.withRunning { proxy in
            var configuration = EngineConfiguration()
            configuration.proxyEnvironment = ProxyEnvironment(environment: [
                "http_proxy": "socks5h://127.0.0.1:\(proxy.port)", "no_proxy": "127.0.0.0/8",
            ])
            try await withEngine(engine: configuration) { engine, server in
                // Bypassed: an address in no_proxy's range goes directly.
                let direct = try #require(URL(string: "http://127.0.0.1:\(server.port)/get"))
                #expect(try await engine.collect(EngineRequest(url: direct)).head.status == .ok)
                #expect(proxy.requests.isEmpty)
                // Proxied: the name is not in no_proxy; its connection is a different pool key.
                let viaProxy = try #require(URL(string: "http://localhost:\(server.port)/get"))
                #expect(try await engine.collect(EngineRequest(url: viaProxy)).head.status == .ok)
                #expect(proxy.requests.map(\.host) == ["localhost"])
                #expect(server.connectionsAccepted == 2)
            }
        }
    }

    /// `no_proxy=127.0.0.1` keeps every numeric spelling of that address away from the proxy.
    @Test func noProxyMatchesOtherSpellingsOfTheAddress() async throws {
        try await TestSOCKSProxyServer.withRunning { proxy in
            var configuration = EngineConfiguration()
            configuration.proxyEnvironment = ProxyEnvironment(environment: [
                "http_proxy": "socks5h://127.0.0.1:\(proxy.port)", "no_proxy": "127.0.0.1",
            ])
            try await withEngine(engine: configuration) { engine, server in
                for host in ["127.1", "2130706433", "0x7f000001", "127.000.000.001"] {
                    let url = try #require(URL(string: "http://\(host):\(server.port)/get"))
                    #expect(try await engine.collect(EngineRequest(url: url)).head.status == .ok, "\(host)")
                }
                #expect(proxy.requests.isEmpty, "\(proxy.requests.map(\.host))")
            }
        }
    }
}

