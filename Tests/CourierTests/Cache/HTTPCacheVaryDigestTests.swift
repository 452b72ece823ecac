@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1
import Testing

/// A secondary key never holds a request header's value in clear, whatever its name: a
/// response with `Vary: X-Api-Key` (or any custom token header) would otherwise put the key in
/// the disk store's metadata files, readable by anyone who reads the cache folder. The key
/// holds the SHA-256 of the normalized value, which matches as RFC 9111 §4.1's rule does.
@Suite("HTTP cache, secondary keys hold digests only")
struct HTTPCacheVaryDigestTests {
    typealias Session = HTTPCacheSessionTests
    typealias Store = HTTPCacheStoreTests

    /// Every regular file under `directory`, with its bytes.
    static func files(under directory: URL) -> [(path: String, bytes: Data)] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return []
        }
        var found: [(String, Data)] = []
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true,
                let bytes = try? Data(contentsOf: url)
            else { continue }
            found.append((url.path, bytes))
        }
        return found
    }

    @Test func aVariedAPIKeyIsNeverWrittenInClear() async throws {
        let directory = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = "sk_live_5f1e2d3c4b5a69788796a5b4c3d2e1f0"
        try await TestServer.withRunning { server in
            // Disk only: a hit proves the entry was read back from its files.
            let manager = Session.manager(HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory))
            // `/response-headers` answers with the headers asked for and never echoes the request's.
            let url = server.sessionURL("/response-headers?Cache-Control=max-age%3D600&Vary=X-Api-Key")
            let first = await Session.fetch(manager, url, headers: ["X-Api-Key": secret])
            #expect(first.error == nil && first.response?.statusCode == 200)
            #expect(first.header("Vary") == "X-Api-Key")
            let again = await Session.fetch(manager, url, headers: ["X-Api-Key": secret])
            #expect(again.metrics?.resourceFetchType == .localCache)
            let other = await Session.fetch(manager, url, headers: ["X-Api-Key": "sk_live_someone_else"])
            #expect(other.metrics?.resourceFetchType == .networkLoad)
            #expect(server.requestsReceived(forPath: "/response-headers") == 2)
        }
        let files = Self.files(under: directory)
        #expect(files.contains { $0.path.hasSuffix(".meta") }, "nothing was written: the test proves nothing")
        for file in files {
            #expect(file.bytes.range(of: Data(secret.utf8)) == nil, "the API key is in \(file.path)")
        }
    }

    /// The digest keeps §4.1's matching: the same value (whitespace normalized) hits, another
    /// value or none misses, for a custom header as for a standard one.
    @Test func aDigestedValueMatchesAsTheValueDid() {
        let response: HTTPHeaders = ["Vary": "X-Api-Key, Accept-Language", "Cache-Control": "public, max-age=60"]
        let request: HTTPHeaders = ["X-Api-Key": "s3cr3t-one", "Accept-Language": "en,  fr"]
        let key = CacheVary.secondaryKey(responseHeaders: response, requestHeaders: request)
        #expect(Set(key.keys) == ["x-api-key", "accept-language"])
        for (name, value) in key {
            #expect(value?.hasPrefix("sha256:") == true && value?.utf8.count == 71, "\(name): \(value ?? "nil")")
        }
        #expect(!key.values.contains { $0?.contains("s3cr3t") == true || $0?.contains("en") == true })
        // The digest of the normalized text (`en, fr`), pinned.
        #expect(key["accept-language"] == "sha256:1692d4288843683ae24cdcb23a05c0723bcbaf403b1eec3211cf8ce1b6618445")
        #expect(CacheVary.matches(key, requestHeaders: request))
        #expect(CacheVary.matches(key, requestHeaders: ["x-api-key": "s3cr3t-one", "accept-language": "en , fr"]))
        #expect(CacheVary.matches(key, requestHeaders: ["X-Api-Key": "s3cr3t-one", "Accept-Language": "en,\tfr"]))
        #expect(!CacheVary.matches(key, requestHeaders: ["X-Api-Key": "s3cr3t-two", "Accept-Language": "en, fr"]))
        #expect(!CacheVary.matches(key, requestHeaders: ["Accept-Language": "en, fr"]))
        #expect(!CacheVary.matches(key, requestHeaders: ["X-Api-Key": "s3cr3t-one", "Accept-Language": "fr, en"]))
        // Absent stays absent (nil), and matches only absent.
        let none = CacheVary.secondaryKey(responseHeaders: response, requestHeaders: [:])
        #expect(none == ["x-api-key": String?.none, "accept-language": String?.none])
        #expect(!CacheVary.matches(none, requestHeaders: ["X-Api-Key": ""]))
    }

    /// Entries written before every value was digested (metadata version 2 and older) may hold
    /// a value in clear: on open, such an entry is dropped and its file removed; one whose key
    /// holds digests or absences only (the same key under the new rule) is kept.
    @Test func anOlderEntryHoldingAValueInClearIsDropped() throws {
        let directory = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = "s3cret-older-store"
        var shared = Store.entry("http://h/public")
        shared.headers = ["Cache-Control": "public, max-age=600"]
        let cookieKey = CacheVary.secondaryKey(responseHeaders: ["Cache-Control": "max-age=600"], requestHeaders: ["Cookie": "s=a"])
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            // What the older rule stored for a `Vary: X-Api-Key` response.
            let clear: [String: String?] = ["x-api-key": secret, "authorization": String?.none, "cookie": String?.none]
            Store.store(cache, Store.entry("http://h/api", varied: clear), body: Store.bytes(100))
            Store.store(cache, shared, body: Store.bytes(100, seed: 2))
            Store.store(cache, Store.entry("http://h/cookie", varied: cookieKey), body: Store.bytes(100, seed: 3))
        }
        // As the older store wrote them: version 2.
        let entries = directory.appendingPathComponent("entries")
        for file in try FileManager.default.contentsOfDirectory(atPath: entries.path) {
            let url = entries.appendingPathComponent(file)
            let text = try String(decoding: Data(contentsOf: url), as: UTF8.self)
            try Data(text.replacingOccurrences(of: "\"version\":3", with: "\"version\":2").utf8).write(to: url)
            #expect(try String(decoding: Data(contentsOf: url), as: UTF8.self).contains("\"version\":2"))
        }
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        #expect(reopened.stored(key: "http://h/api", requestHeaders: ["X-Api-Key": secret]) == nil)
        #expect(Store.body(of: reopened.stored(key: "http://h/public", requestHeaders: [:])) == Store.bytes(100, seed: 2))
        #expect(Store.body(of: reopened.stored(key: "http://h/cookie", requestHeaders: ["Cookie": "s=a"])) == Store.bytes(100, seed: 3))
        #expect((try FileManager.default.contentsOfDirectory(atPath: entries.path)).count == 2)
        for file in Self.files(under: directory) {
            #expect(file.bytes.range(of: Data(secret.utf8)) == nil, "the value is still in \(file.path)")
        }
    }
}
