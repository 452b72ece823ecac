@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Cookies: stored from `Set-Cookie` (redirect hops included) and sent back from the
/// configuration's jar.
@Suite("Session cookies")
struct SessionCookieTests {
    static func cookies(_ manager: URLSessionManager, _ url: URL, handleCookies: Bool = true) async throws -> JSONValue? {
        var request = URLRequest(url: url)
        request.httpShouldHandleCookies = handleCookies
        let (object, _) = try await manager.data(for: request)
        return (object as? JSONValue)?["cookies"]
    }

    @Test func cookieSetOnARedirectIsSentToItsTarget() async throws {
        let jar = HTTPCookieJar()
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.cookieJar = jar
            let manager = URLSessionManager(configuration: configuration)
            // 302 with Set-Cookie, then /cookies echoes the Cookie header it received.
            let afterSet = try await Self.cookies(manager, server.sessionURL("/cookies/set?flavour=oat&batch=7"))
            #expect(afterSet == ["flavour": "oat", "batch": "7"])
            #expect(jar.cookies(for: server.baseURL).count == 2)
            // Later requests carry them; a request that opts out does not.
            let later = try await Self.cookies(manager, server.sessionURL("/cookies"))
            #expect(later == ["flavour": "oat", "batch": "7"])
            let optedOut = try await Self.cookies(manager, server.sessionURL("/cookies"), handleCookies: false)
            #expect(optedOut == [:])
            // Deleting expires it in the store.
            let afterDelete = try await Self.cookies(manager, server.sessionURL("/cookies/delete?flavour"))
            #expect(afterDelete == ["batch": "7"])
            #expect(jar.allCookies.map(\.name) == ["batch"])
        }
    }

    @Test func withoutAStoreNoCookieIsKept() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let cookies = try await Self.cookies(manager, server.sessionURL("/cookies/set?flavour=oat"))
            #expect(cookies == [:])
        }
    }

    @Test func aCookieHeaderOfTheRequestWins() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.cookieJar = HTTPCookieJar()
            let manager = URLSessionManager(configuration: configuration)
            _ = try await Self.cookies(manager, server.sessionURL("/cookies/set?flavour=oat"))
            var request = URLRequest(url: server.sessionURL("/cookies"))
            request.setValue("mine=1", forHTTPHeaderField: "Cookie")
            let (object, _) = try await manager.data(for: request)
            #expect((object as? JSONValue)?["cookies"] == ["mine": "1"])
        }
    }
}

/// The deprecated `httpCookieStorage` still gives a session cookies, through a jar.
@Suite("Session cookies: httpCookieStorage compatibility")
struct LegacyCookieStorageTests {
    @available(*, deprecated, message: "exercises the deprecated httpCookieStorage")
    @Test func settingAStorageGivesTheConfigurationAJar() async throws {
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "courier.tests.\(UUID().uuidString)")
        var configuration = SessionConfiguration()
        configuration.httpCookieStorage = storage
        #expect(configuration.httpCookieStorage === storage)
        let jar = try #require(configuration.cookieJar)
        try await TestServer.withRunning { server in
            let manager = URLSessionManager(configuration: configuration)
            let cookies = try await SessionCookieTests.cookies(manager, server.sessionURL("/cookies/set?flavour=oat"))
            #expect(cookies == ["flavour": "oat"])
            #expect(jar.allCookies.map(\.name) == ["flavour"])
            // The storage is not written.
            #expect(storage.cookies?.isEmpty ?? true)
        }
        configuration.httpCookieStorage = nil
        #expect(configuration.cookieJar == nil)
    }
}
