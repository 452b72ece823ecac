@testable import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The cookie rules a hostile server must not get around, end to end through the session:
/// named hosts are reached through the test server acting as a forward proxy (it answers
/// absolute-form requests for any host), so `Domain` attributes meet real host names.
@Suite("Cookie jar through the session")
struct CookieJarSessionTests {
    /// A manager whose requests all go to `server` as their proxy.
    static func proxied(_ server: TestServer, jar: HTTPCookieJar) -> URLSessionManager {
        var configuration = SessionConfiguration()
        configuration.cookieJar = jar
        configuration.proxy = EngineProxy(host: "127.0.0.1", port: server.port)
        return URLSessionManager(configuration: configuration)
    }

    static func url(_ string: String) throws -> URL { try #require(URL(string: string)) }

    /// Asks `url` (an origin) to answer with each `Set-Cookie` field.
    static func set(_ manager: URLSessionManager, _ origin: String, _ fields: String...) async throws {
        var query = URLComponents()
        query.queryItems = fields.map { URLQueryItem(name: "Set-Cookie", value: $0) }
        let encoded = (query.percentEncodedQuery ?? "").replacingOccurrences(of: ";", with: "%3B")
        _ = try await manager.data(for: URLRequest(url: try url(origin + "/response-headers?" + encoded)))
    }

    /// The cookies `origin` received on `/cookies`.
    static func sent(_ manager: URLSessionManager, _ origin: String) async throws -> JSONValue? {
        let (object, _) = try await manager.data(for: URLRequest(url: try url(origin + "/cookies")))
        return (object as? JSONValue)?["cookies"]
    }

    @Test func aDomainThatIsAPublicSuffixIsRejected() async throws {
        let jar = HTTPCookieJar()
        try await TestServer.withRunning { server in
            let manager = Self.proxied(server, jar: jar)
            try await Self.set(manager, "http://www.example.co.uk", "uk=1; Domain=co.uk; Path=/")
            try await Self.set(manager, "http://www.example.com", "com=1; Domain=.com; Path=/")
            #expect(try await Self.sent(manager, "http://attacker.co.uk") == [:])
            #expect(try await Self.sent(manager, "http://attacker.com") == [:])
        }
    }

    @Test func aRegistrableDomainIsSharedWithItsSubdomainsOnly() async throws {
        let jar = HTTPCookieJar()
        try await TestServer.withRunning { server in
            let manager = Self.proxied(server, jar: jar)
            try await Self.set(manager, "http://www.example.co.uk", "shared=1; Domain=example.co.uk; Path=/")
            #expect(try await Self.sent(manager, "http://api.example.co.uk") == ["shared": "1"])
            #expect(try await Self.sent(manager, "http://example.co.uk") == ["shared": "1"])
            #expect(try await Self.sent(manager, "http://badexample.co.uk") == [:])
        }
    }

    @Test func aRedirectToAnotherHostCarriesOnlyThatHostsCookies() async throws {
        let jar = HTTPCookieJar()
        try await TestServer.withRunning { server in
            let manager = Self.proxied(server, jar: jar)
            try await Self.set(manager, "http://www.example.com", "shared=1; Domain=example.com; Path=/", "own=1; Path=/")
            let target = "http%3A%2F%2Fapi.example.com%2Fcookies"
            let (object, _) = try await manager.data(
                for: URLRequest(url: try Self.url("http://www.example.com/redirect-to?url=\(target)")))
            #expect((object as? JSONValue)?["cookies"] == ["shared": "1"])
        }
    }

    @Test func anIPAddressHostGetsHostOnlyCookies() async throws {
        let jar = HTTPCookieJar()
        try await TestServer.withRunning { server in
            let manager = Self.proxied(server, jar: jar)
            try await Self.set(manager, "http://10.1.2.3", "suffix=1; Domain=2.3; Path=/", "same=1; Domain=10.1.2.3; Path=/")
            #expect(try await Self.sent(manager, "http://10.9.2.3") == [:])
            #expect(try await Self.sent(manager, "http://10.1.2.3") == ["same": "1"])
        }
    }

    @Test func aSecureCookieIsNeverSentOverHTTPNorOverwrittenFromIt() async throws {
        let jar = HTTPCookieJar()
        try await TestServer.withRunning(.init(tls: .valid)) { secure in
            try await TestServer.withRunning { plain in
                var configuration = SessionSecurityTests.trustingTestCA
                configuration.cookieJar = jar
                let manager = URLSessionManager(configuration: configuration)
                // Same host (cookies ignore the port), one https origin and one http origin.
                let https = secure.baseURL.absoluteString
                let http = plain.baseURL.absoluteString
                try await Self.set(manager, https, "token=good; Secure; Path=/", "plain=1; Path=/")
                #expect(try await Self.sent(manager, http) == ["plain": "1"])
                // An http response may neither set a Secure cookie nor shadow one.
                try await Self.set(manager, http, "token=evil; Path=/", "other=1; Secure; Path=/")
                #expect(try await Self.sent(manager, https) == ["token": "good", "plain": "1"])
                #expect(try await Self.sent(manager, http) == ["plain": "1"])
            }
        }
    }

    @Test func cookiePrefixesAreEnforced() async throws {
        let jar = HTTPCookieJar()
        try await TestServer.withRunning { server in
            let manager = Self.proxied(server, jar: jar)
            try await Self.set(
                manager, "http://www.example.com", "__Host-id=1; Path=/", "__Secure-id=1; Path=/", "ok=1; Path=/")
            #expect(try await Self.sent(manager, "http://www.example.com") == ["ok": "1"])
        }
    }

    @Test func maxAgeMakesAPersistentCookieThatExpiresOnTime() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = CookieTestClock(start)
        let jar = HTTPCookieJar(clock: { clock.now })
        try await TestServer.withRunning { server in
            let manager = Self.proxied(server, jar: jar)
            try await Self.set(manager, "http://www.example.com", "kept=1; Max-Age=3600; Path=/", "session=1; Path=/")
            let cookie = try #require(jar.allCookies.first { $0.name == "kept" })
            #expect(!cookie.isSessionOnly && cookie.expiresDate == start.addingTimeInterval(3600))
            clock.now = start.addingTimeInterval(3599)
            #expect(try await Self.sent(manager, "http://www.example.com") == ["kept": "1", "session": "1"])
            clock.now = start.addingTimeInterval(3601)
            #expect(try await Self.sent(manager, "http://www.example.com") == ["session": "1"])
            // Max-Age=0 deletes.
            try await Self.set(manager, "http://www.example.com", "session=; Max-Age=0; Path=/")
            #expect(try await Self.sent(manager, "http://www.example.com") == [:])
        }
    }
}
