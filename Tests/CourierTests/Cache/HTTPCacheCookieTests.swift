@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1
import Testing

/// A response that isn't `public` answers the request's cookies as it answers its
/// `Authorization`: one `HTTPCache` (``ImageDownloader/defaultHTTPCache`` is shared by every
/// downloader made from the default configuration) may serve several users of a server process,
/// each with their own session cookie. The cache keeps such responses apart by a digest of
/// `Cookie` (absent included); `public` ones stay shared.
@Suite("HTTP cache, Cookie keeps users apart")
struct HTTPCacheCookieTests {
    typealias Session = HTTPCacheSessionTests
    typealias Store = HTTPCacheStoreTests

    // MARK: The rule

    @Test func aNonPublicResponseVariesOnCookie() {
        let alice: HTTPHeaders = ["Cookie": "session=alice"]
        for control in ["max-age=60", "private, max-age=60", "public, private, max-age=60", "must-revalidate, max-age=60"] {
            let key = CacheVary.secondaryKey(responseHeaders: ["Cache-Control": control], requestHeaders: alice)
            #expect(key.keys.contains("cookie"), "\(control)")
            #expect(CacheVary.matches(key, requestHeaders: alice), "\(control)")
            #expect(CacheVary.matches(key, requestHeaders: ["cookie": "session=alice"]), "\(control)")
            #expect(!CacheVary.matches(key, requestHeaders: ["Cookie": "session=bob"]), "\(control)")
            #expect(!CacheVary.matches(key, requestHeaders: [:]), "\(control)")
            // The digest, never the value (the disk store writes keys to its metadata files).
            #expect(!key.values.contains { $0?.contains("alice") == true }, "\(control)")
        }
        // Stored for a request without cookies: not served to one with some.
        let anonymous = CacheVary.secondaryKey(responseHeaders: ["Cache-Control": "max-age=60"], requestHeaders: [:])
        #expect(anonymous == ["authorization": String?.none, "cookie": String?.none])
        #expect(CacheVary.matches(anonymous, requestHeaders: [:]))
        #expect(!CacheVary.matches(anonymous, requestHeaders: alice))
        // The server said public: shared whatever the cookies.
        let shared = CacheVary.secondaryKey(responseHeaders: ["Cache-Control": "public, max-age=60"], requestHeaders: alice)
        #expect(shared.isEmpty && CacheVary.matches(shared, requestHeaders: ["Cookie": "session=bob"]))
    }

    /// The names a non-public response is keyed on beyond its `Vary`.
    @Test func theImpliedFieldsAreAuthorizationAndCookie() {
        #expect(CacheVary.impliedFieldNames(responseHeaders: ["Cache-Control": "max-age=60"]) == ["authorization", "cookie"])
        #expect(CacheVary.impliedFieldNames(responseHeaders: [:]) == ["authorization", "cookie"])
        #expect(CacheVary.impliedFieldNames(responseHeaders: ["Cache-Control": "public, private"]) == ["authorization", "cookie"])
        #expect(CacheVary.impliedFieldNames(responseHeaders: ["Cache-Control": "public, max-age=60"]).isEmpty)
    }

    // MARK: Through the session

    @Test func aNonPublicResponseToOneCookieIsNotServedToAnother() async throws {
        try await TestServer.withRunning { server in
            let manager = Session.manager(HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil))
            let url = server.sessionURL("/cached/cookie-user?cc=max-age=60")
            let alice = await Session.fetch(manager, url, headers: ["Cookie": "session=alice"])
            let bob = await Session.fetch(manager, url, headers: ["Cookie": "session=bob"])
            #expect(alice.error == nil && bob.error == nil)
            #expect(alice.id != nil && bob.id != nil && bob.id != alice.id)
            #expect(bob.metrics?.resourceFetchType == .networkLoad)
            #expect(server.requestsReceived(forPath: "/cached/cookie-user") == 2)
            // The same cookie again: served from the cache, nothing sent.
            let aliceAgain = await Session.fetch(manager, url, headers: ["Cookie": "session=alice"])
            #expect(aliceAgain.id == alice.id && aliceAgain.metrics?.resourceFetchType == .localCache)
            let bobAgain = await Session.fetch(manager, url, headers: ["Cookie": "session=bob"])
            #expect(bobAgain.id == bob.id && bobAgain.metrics?.resourceFetchType == .localCache)
            // No cookie: not the response to either.
            let nobody = await Session.fetch(manager, url)
            #expect(nobody.id != alice.id && nobody.id != bob.id)
            #expect(server.requestsReceived(forPath: "/cached/cookie-user") == 3)
        }
    }

    @Test func aPublicResponseIsSharedWhateverTheCookie() async throws {
        try await TestServer.withRunning { server in
            let manager = Session.manager(HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil))
            let url = server.sessionURL("/cached/cookie-shared?cc=public,max-age=60")
            let alice = await Session.fetch(manager, url, headers: ["Cookie": "session=alice"])
            let bob = await Session.fetch(manager, url, headers: ["Cookie": "session=bob"])
            #expect(alice.id != nil && bob.id == alice.id && bob.metrics?.resourceFetchType == .localCache)
            #expect(server.requestsReceived(forPath: "/cached/cookie-shared") == 1)
        }
    }

    /// The session adds the jar's `Cookie` to the request before the cache looks it up
    /// (SessionBridge.engineRequest, then CachedExchange.prepare): the key sees the cookie
    /// that is sent, whether the caller or the jar set it.
    @Test func theJarsCookieIsInTheKey() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil)
            let jar = HTTPCookieJar()
            configuration.cookieJar = jar
            let manager = URLSessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            let url = server.sessionURL("/cached/cookie-jar?cc=max-age=60")
            _ = jar.storeCookies(fromSetCookieFields: ["session=alice"], for: url)
            #expect(jar.cookieHeader(for: url) == "session=alice")
            let alice = await Session.fetch(manager, url)
            _ = jar.storeCookies(fromSetCookieFields: ["session=bob"], for: url)
            #expect(jar.cookieHeader(for: url) == "session=bob")
            let bob = await Session.fetch(manager, url)
            #expect(alice.id != nil && bob.id != nil && bob.id != alice.id)
            #expect(server.requestsReceived(forPath: "/cached/cookie-jar") == 2)
            let bobAgain = await Session.fetch(manager, url)
            #expect(bobAgain.id == bob.id && bobAgain.metrics?.resourceFetchType == .localCache)
            #expect(server.requestsReceived(forPath: "/cached/cookie-jar") == 2)
        }
    }

    /// A stored `public` response is keyed on nothing; a 304 (to one user's request) that makes
    /// it non-public would leave it shared by everyone, the head now saying it is for one user.
    /// The refresh removes it instead: the next request fetches it keyed for its own user.
    @Test(arguments: [false, true]) func a304MakingASharedEntryNonPublicRemovesIt(onDisk: Bool) throws {
        let directory = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = Store.cache(onDisk: onDisk, in: directory)
        var shared = Store.entry("http://h/flip")
        shared.headers = ["Cache-Control": "public, max-age=0", "ETag": "\"v1\""]
        Store.store(cache, shared, body: Store.bytes(100))
        // The entry's head (a body opened on disk is closed).
        func head(for requestHeaders: HTTPHeaders) -> CacheEntry? {
            let found = cache.stored(key: "http://h/flip", requestHeaders: requestHeaders)
            if case .file(let handle, _) = found?.body { try? handle.close() }
            return found?.entry
        }
        let stored = try #require(head(for: ["Cookie": "session=alice"]))
        // Still public: refreshed, shared.
        let stillPublic = CacheValidation.merged(
            stored, notModifiedHeaders: ["Cache-Control": "public, max-age=60"], requestTime: Date(), responseTime: Date())
        cache.refresh(stillPublic)
        #expect(head(for: ["Cookie": "session=bob"])?.headers["cache-control"] == ["public, max-age=60"])
        // Now private: gone for everyone.
        let nowPrivate = CacheValidation.merged(
            stored, notModifiedHeaders: ["Cache-Control": "private, max-age=60"], requestTime: Date(), responseTime: Date())
        cache.refresh(nowPrivate)
        #expect(head(for: ["Cookie": "session=bob"]) == nil)
        #expect(head(for: ["Cookie": "session=alice"]) == nil)
        #expect(head(for: [:]) == nil)
    }

    // MARK: Entries stored under the older rule

    /// A disk cache written before `Cookie` was in the key holds non-public entries keyed on
    /// `Authorization` only; loaded as they are, they would be served to any cookie. Metadata
    /// files of that format (version 1) are kept only when their key holds every name the rule
    /// now implies (public responses: none), so the leak does not outlive an upgrade.
    @Test func anOlderEntryNotKeyedOnCookieIsDropped() throws {
        let directory = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var shared = Store.entry("http://h/public")
        shared.headers = ["Cache-Control": "public, max-age=600"]
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            // What the older rule stored for Alice's request (Cookie: session=alice, no Authorization).
            Store.store(cache, Store.entry("http://h/private", varied: ["authorization": String?.none]), body: Store.bytes(100))
            Store.store(cache, shared, body: Store.bytes(100, seed: 2))
        }
        // As the older store wrote them: version 1.
        let entries = directory.appendingPathComponent("entries")
        for file in try FileManager.default.contentsOfDirectory(atPath: entries.path) {
            let url = entries.appendingPathComponent(file)
            let text = try String(decoding: Data(contentsOf: url), as: UTF8.self)
            try Data(text.replacingOccurrences(of: "\"version\":3", with: "\"version\":1").utf8).write(to: url)
            #expect(try String(decoding: Data(contentsOf: url), as: UTF8.self).contains("\"version\":1"))
        }
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        #expect(reopened.stored(key: "http://h/private", requestHeaders: ["Cookie": "session=bob"]) == nil)
        #expect(reopened.stored(key: "http://h/private", requestHeaders: [:]) == nil)
        #expect(Store.body(of: reopened.stored(key: "http://h/public", requestHeaders: ["Cookie": "session=bob"])) == Store.bytes(100, seed: 2))
        #expect((try FileManager.default.contentsOfDirectory(atPath: entries.path)).count == 1)
    }
}
