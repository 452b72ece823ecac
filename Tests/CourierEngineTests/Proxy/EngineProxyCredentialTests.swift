import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// A `Proxy-Authorization` field the caller set never goes through a tunnel (a `CONNECT`
/// through an HTTP proxy, or SOCKS5) to the origin: the proxy's credentials are the proxy's.
/// The origin (the test server's `/headers`) must not see it, over HTTP/1.1 and HTTP/2.
@Suite("HTTPEngine keeps proxy credentials from the origin")
struct EngineProxyCredentialTests {
    static let callerValue = "Basic " + Data("caller:proxy-secret".utf8).base64EncodedString()

    static func tlsConfiguration(proxy: EngineProxy) throws -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.proxy = proxy
        configuration.connectTimeout = .seconds(20)
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        return configuration
    }

    /// The headers (names lowercased) the origin says it received, from `/headers`, for a
    /// request carrying a caller-set `Proxy-Authorization`; and the protocol it went over.
    static func originHeaders(
        _ engine: HTTPEngine, _ url: URL
    ) async throws -> (headers: [String: String], protocolName: String?) {
        // Twice, the second in odd case: every spelling of the field is the same field.
        let request = EngineRequest(
            url: url, headers: ["Proxy-Authorization": callerValue, "X-Marker": "kept", "pRoXy-AuThOrIzAtIoN": callerValue + "2"])
        let response = try await engine.collect(request)
        #expect(response.head.status == .ok)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any])
        let headers = try #require(json["headers"] as? [String: Any])
        var seen: [String: String] = [:]
        for (name, value) in headers { seen[name.lowercased()] = "\(value)" }
        return (seen, response.metrics.networkProtocolName)
    }

    @Test("https through a CONNECT tunnel, HTTP/1.1 and HTTP/2, with and without proxy credentials",
        arguments: [EngineConfiguration.HTTPVersionPolicy.http1Only, .automatic], [false, true])
    func connectTunnelDropsTheCallersField(policy: EngineConfiguration.HTTPVersionPolicy, proxyCredentials: Bool) async throws {
        let configured = "Basic " + Data("ada:secret".utf8).base64EncodedString()
        try await TestProxyServer.withRunning(requiredAuthorization: proxyCredentials ? configured : nil) { proxy in
            var configuration = try Self.tlsConfiguration(
                proxy: EngineProxy(
                    host: "127.0.0.1", port: proxy.port, username: proxyCredentials ? "ada" : nil,
                    password: proxyCredentials ? "secret" : nil))
            configuration.httpVersion = policy
            try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/headers"))
                let (seen, protocolName) = try await Self.originHeaders(engine, url)
                #expect(protocolName == (policy == .automatic ? "h2" : "http/1.1"))
                #expect(seen["x-marker"] == "kept")
                #expect(seen["proxy-authorization"] == nil, "the origin received the proxy's credentials: \(seen)")
                #expect(proxy.requestLines == ["CONNECT localhost:\(server.port) HTTP/1.1"])
            }
        }
    }

    @Test("http and https through a SOCKS5 tunnel", arguments: [false, true])
    func socksTunnelDropsTheCallersField(https: Bool) async throws {
        try await TestSOCKSProxyServer.withRunning { proxy in
            let configuration = try Self.tlsConfiguration(
                proxy: EngineProxy(host: "127.0.0.1", port: proxy.port, kind: .socks5h))
            try await withEngine(server: .init(tls: https ? .valid : nil), engine: configuration) { engine, server in
                let url = try #require(URL(string: "\(https ? "https" : "http")://localhost:\(server.port)/headers"))
                let (seen, _) = try await Self.originHeaders(engine, url)
                #expect(seen["x-marker"] == "kept")
                #expect(seen["proxy-authorization"] == nil, "the origin received the proxy's credentials: \(seen)")
            }
        }
    }

    @Test("without a proxy the field is sent as given")
    func directRequestKeepsTheField() async throws {
        try await withEngine { engine, server in
            let (seen, _) = try await Self.originHeaders(engine, server.url("/headers"))
            #expect(seen["proxy-authorization"] == Self.callerValue + "," + Self.callerValue + "2")
        }
    }
}
