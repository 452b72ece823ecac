@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Cookies: stored from `Set-Cookie` (redirect hops included) and sent back from the
/// configuration's store.
@Suite("Session cookies")
struct SessionCookieTests {
    /// A cookie store of the test's own, emptied afterwards.
    static func withCookieStore<T>(_ body: (HTTPCookieStorage) async throws -> T) async throws -> T {
        let identifier = "courier.tests.\(UUID().uuidString)"
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: identifier)
        defer {
            storage.removeCookies(since: .distantPast)
            removePersistedStore(identifier)
        }
        return try await body(storage)
    }

    /// FoundationNetworking keeps a group store in a file `.cookies.<identifier>` under the
    /// user's application-support folder (`~/.local/share/<program>/`); remove it.
    static func removePersistedStore(_ identifier: String) {
        let fileManager = FileManager.default
        for base in fileManager.urls(for: .applicationSupportDirectory, in: .userDomainMask) {
            let folders = (try? fileManager.contentsOfDirectory(at: base, includingPropertiesForKeys: nil)) ?? []
            for folder in folders + [base] {
                try? fileManager.removeItem(at: folder.appendingPathComponent(".cookies.\(identifier)"))
            }
        }
    }

    static func cookies(_ manager: URLSessionManager, _ url: URL, handleCookies: Bool = true) async throws -> JSONValue? {
        var request = URLRequest(url: url)
        request.httpShouldHandleCookies = handleCookies
        let (object, _) = try await manager.data(for: request)
        return (object as? JSONValue)?["cookies"]
    }

    @Test func cookieSetOnARedirectIsSentToItsTarget() async throws {
        try await Self.withCookieStore { storage in
            try await TestServer.withRunning { server in
                var configuration = SessionConfiguration()
                configuration.httpCookieStorage = storage
                let manager = URLSessionManager(configuration: configuration)
                // 302 with Set-Cookie, then /cookies echoes the Cookie header it received.
                let afterSet = try await Self.cookies(manager, server.sessionURL("/cookies/set?flavour=oat&batch=7"))
                #expect(afterSet == ["flavour": "oat", "batch": "7"])
                #expect(storage.cookies(for: server.baseURL)?.count == 2)
                // Later requests carry them; a request that opts out does not.
                let later = try await Self.cookies(manager, server.sessionURL("/cookies"))
                #expect(later == ["flavour": "oat", "batch": "7"])
                let optedOut = try await Self.cookies(manager, server.sessionURL("/cookies"), handleCookies: false)
                #expect(optedOut == [:])
                // Deleting expires it in the store.
                let afterDelete = try await Self.cookies(manager, server.sessionURL("/cookies/delete?flavour"))
                #expect(afterDelete == ["batch": "7"])
            }
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
        try await Self.withCookieStore { storage in
            try await TestServer.withRunning { server in
                var configuration = SessionConfiguration()
                configuration.httpCookieStorage = storage
                let manager = URLSessionManager(configuration: configuration)
                _ = try await Self.cookies(manager, server.sessionURL("/cookies/set?flavour=oat"))
                var request = URLRequest(url: server.sessionURL("/cookies"))
                request.setValue("mine=1", forHTTPHeaderField: "Cookie")
                let (object, _) = try await manager.data(for: request)
                #expect((object as? JSONValue)?["cookies"] == ["mine": "1"])
            }
        }
    }
}

@Suite("Set-Cookie expiry")
struct SetCookieExpiryTests {
    @Test func maxAgeAndExpiresDecideRemoval() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(SetCookieExpiry.removesCookie("a=; Max-Age=0; Path=/", now: now))
        #expect(SetCookieExpiry.removesCookie("a=; max-age=-1", now: now))
        #expect(SetCookieExpiry.removesCookie("a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/", now: now))
        #expect(SetCookieExpiry.removesCookie("a=; expires=Thursday, 01-Jan-70 00:00:00 GMT", now: now))
        #expect(!SetCookieExpiry.removesCookie("a=1; Path=/", now: now))
        #expect(!SetCookieExpiry.removesCookie("a=1; Max-Age=60", now: now))
        #expect(!SetCookieExpiry.removesCookie("a=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT", now: now))
        // Max-Age wins over Expires (RFC 6265 §5.2.2).
        #expect(!SetCookieExpiry.removesCookie("a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=60", now: now))
        #expect(!SetCookieExpiry.removesCookie("a=1; Expires=garbage", now: now))
    }
}
