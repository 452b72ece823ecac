@testable import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// Unix domain sockets: `http+unix://` and `https+unix://` URLs (AsyncHTTPClient's spelling),
/// and ``EngineConfiguration/unixSocketPaths`` for ordinary URLs, against the test server
/// listening on a socket.
@Suite("Unix domain sockets")
struct UnixSocketTests {
    /// A fresh socket path, short enough for `sockaddr_un` (108 bytes).
    static func socketPath() -> String {
        "/tmp/courier-\(UUID().uuidString.prefix(8)).sock"
    }

    /// `path` percent-encoded as a `+unix` URL's host.
    static func encoded(_ path: String) -> String {
        path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path
    }

    private func trusting(_ authority: TestCertificateAuthority) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [authority.rootCertificateDER]
        return configuration
    }

    @Test("an http+unix URL reaches the server on its socket, as localhost; the metrics name the path")
    func httpUnixURL() async throws {
        let path = Self.socketPath()
        try await withEngine(server: .init(unixSocketPath: path)) { engine, server in
            let url = try #require(URL(string: "http+unix://\(Self.encoded(path))/get?a=1"))
            let response = try await engine.collect(EngineRequest(url: url))
            #expect(response.head.status == .ok)
            let json = try response.json()
            #expect((json["args"] as? [String: Any])?["a"] as? String == "1")
            #expect((json["headers"] as? [String: Any])?["Host"] as? String == "localhost")
            let metrics = response.metrics
            #expect(metrics.remoteAddress == path)
            #expect(metrics.remotePort == nil)
            #expect(metrics.domainLookupStart == nil, "no name lookup for a socket")
            #expect(metrics.connectStart != nil && metrics.connectEnd != nil)
            #expect(metrics.addressOverride == nil)
            // The server's own base URL is the same spelling.
            let again = try await engine.collect(EngineRequest(url: server.url("/get")))
            #expect(again.head.status == .ok)
            #expect(again.metrics.isReusedConnection)
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test("unixSocketPaths sends an ordinary URL's host to a socket; the Host header keeps the name")
    func mappedHost() async throws {
        let path = Self.socketPath()
        var configuration = EngineConfiguration()
        configuration.unixSocketPaths = ["Docker": path]
        try await withEngine(server: .init(unixSocketPath: path), engine: configuration) { engine, server in
            let url = try #require(URL(string: "http://docker/anything/v1.45/info"))
            let response = try await engine.collect(EngineRequest(url: url))
            #expect(response.head.status == .ok)
            let json = try response.json()
            #expect((json["headers"] as? [String: Any])?["Host"] as? String == "docker")
            #expect(response.metrics.remoteAddress == path)
            #expect(server.requestsReceived(forPath: "/anything/v1.45/info") == 1)
        }
    }

    @Test("the key * sends every host to the socket")
    func wildcard() async throws {
        let path = Self.socketPath()
        var configuration = EngineConfiguration()
        configuration.unixSocketPaths = ["*": path]
        try await withEngine(server: .init(unixSocketPath: path), engine: configuration) { engine, _ in
            let response = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://any.invalid:8080/get"))))
            #expect(response.head.status == .ok)
            #expect((try response.json()["headers"] as? [String: Any])?["Host"] as? String == "any.invalid:8080")
        }
    }

    @Test("connections are pooled per socket path: two sockets, two pools, each reused")
    func pooledPerPath() async throws {
        let first = Self.socketPath()
        let second = Self.socketPath()
        var configuration = EngineConfiguration()
        configuration.unixSocketPaths = ["one": first, "two": second]
        try await TestServer.withRunning(.init(unixSocketPath: second)) { other in
            try await withEngine(server: .init(unixSocketPath: first), engine: configuration) { engine, server in
                for host in ["one", "two", "one", "two"] {
                    let response = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://\(host)/get"))))
                    #expect(response.head.status == .ok)
                    #expect(response.metrics.remoteAddress == (host == "one" ? first : second))
                }
                // The same socket by its +unix URL is another origin (localhost), so another connection.
                _ = try await engine.collect(EngineRequest(url: server.url("/get")))
                #expect(server.requestsReceived == 3)
                #expect(server.connectionsAccepted == 2)
                #expect(other.requestsReceived == 2)
                #expect(other.connectionsAccepted == 1)
            }
        }
    }

    @Test("a socket skips the configured proxy")
    func noProxy() async throws {
        let path = Self.socketPath()
        var configuration = EngineConfiguration()
        // Nothing listens there: a request that went to the proxy would fail.
        configuration.proxy = EngineProxy(host: "127.0.0.1", port: 1)
        configuration.unixSocketPaths = ["docker": path]
        try await withEngine(server: .init(unixSocketPath: path), engine: configuration) { engine, server in
            let mapped = try await engine.collect(EngineRequest(url: try #require(URL(string: "http://docker/get"))))
            #expect(mapped.head.status == .ok)
            let byURL = try await engine.collect(EngineRequest(url: server.url("/get")))
            #expect(byURL.head.status == .ok)
        }
    }

    @Test("https+unix checks the certificate for localhost; a mapped host is checked by its name")
    func tlsOverASocket() async throws {
        let authority = try TestCertificateAuthority.shared
        let path = Self.socketPath()
        try await withEngine(server: .init(tls: .valid, unixSocketPath: path), engine: trusting(authority)) { engine, server in
            #expect(server.baseURL.absoluteString.hasPrefix("https+unix://"))
            let response = try await engine.collect(EngineRequest(url: server.url("/get")))
            #expect(response.head.status == .ok)
            #expect(response.metrics.tlsProtocolVersion != nil)
            #expect(response.metrics.remoteAddress == path)
        }
        let wrongPath = Self.socketPath()
        var mapped = trusting(authority)
        mapped.unixSocketPaths = ["wrong.host.example": wrongPath]
        try await withEngine(server: .init(tls: .wrongHost, unixSocketPath: wrongPath), engine: mapped) { engine, server in
            let named = try await engine.collect(EngineRequest(url: try #require(URL(string: "https://wrong.host.example/get"))))
            #expect(named.head.status == .ok)
            // The same server as localhost: its certificate doesn't name localhost.
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: server.url("/get"))) }
            guard case .serverTrustRejected(let host, _, _) = error else {
                Issue.record("expected serverTrustRejected, got \(String(describing: error))")
                return
            }
            #expect(host == "localhost")
        }
    }

    @Test("a socket nobody listens on fails to connect, naming the path")
    func missingSocket() async throws {
        let path = Self.socketPath()
        let engine = try HTTPEngine()
        defer { Task { await engine.shutdown() } }
        let url = try #require(URL(string: "http+unix://\(Self.encoded(path))/get"))
        let error = await engineError { _ = try await engine.collect(EngineRequest(url: url)) }
        guard case .cannotConnect(_, _, let reason) = error else {
            Issue.record("expected cannotConnect, got \(String(describing: error))")
            return
        }
        #expect(reason.contains(path), "\(reason)")
    }

    @Test("parsing: the host is the socket's path, percent-decoded; the request names localhost")
    func parsing() throws {
        let target = try RequestTarget(string: "http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.45/containers/json?all=1#x")
        #expect(target.socketPath == "/var/run/docker.sock")
        #expect(target.scheme == .http)
        #expect(target.host == "localhost")
        #expect(target.hostHeader == "localhost")
        #expect(target.target == "/v1.45/containers/json?all=1")
        let secure = try RequestTarget(string: "HTTPS+UNIX://%2Ftmp%2Fs.sock")
        #expect(secure.scheme == .https && secure.port == 443 && secure.target == "/" && secure.socketPath == "/tmp/s.sock")
        #expect(ConnectionKey(target) != ConnectionKey(try RequestTarget(string: "http+unix://%2Fother.sock/")))
        #expect(throws: EngineError.self) { try RequestTarget(string: "http+unix:///v1.45/info") }
        #expect(throws: EngineError.self) { try RequestTarget(string: "http+unix://%00/x") }
        #expect(throws: EngineError.unsupportedScheme("ftp+unix")) { try RequestTarget(string: "ftp+unix://%2Fx/") }
    }
}
