@testable import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// ``SessionConfiguration/cache`` end to end against the test server's `/cached/…` endpoint,
/// counting what reaches the server.
@Suite("HTTP cache through the session")
struct HTTPCacheSessionTests {
    struct Fetched: @unchecked Sendable {
        var response: HTTPURLResponse?
        var json: [String: Any]?
        var error: (any Error)?
        var metrics: EngineMetrics?
        var id: String? { json?["id"] as? String }
        func header(_ name: String) -> String? { response?.value(forHTTPHeaderField: name) }
    }

    static func manager(_ cache: HTTPCache) -> URLSessionManager {
        var configuration = SessionConfiguration()
        configuration.cache = cache
        let manager = URLSessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        return manager
    }

    static func fetch(
        _ manager: URLSessionManager, _ url: URL, method: String = "GET", policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
        headers: [String: String] = [:]
    ) async -> Fetched {
        var request = URLRequest(url: url, cachePolicy: policy)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let recorder = CompletionRecorder()
        let task = manager.dataTask(with: request, completionHandler: recorder.handler)
        task.resume()
        await recorder.wait()
        let call = recorder.first
        let json = (call?.object as? Data).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        return Fetched(response: call?.response, json: json, error: call?.error, metrics: task.metrics)
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("CourierCacheSession-\(UUID().uuidString)")
    }

    @Test func aFreshHitSendsNothing() async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil))
            let reported = Mutex<[EngineMetrics.ResourceFetchType]>([])
            manager.setTaskDidFinishCollectingMetricsBlock { _, metrics in reported.withLock { $0.append(metrics.resourceFetchType) } }
            let url = server.sessionURL("/cached/fresh?cc=max-age=600")
            let first = await Self.fetch(manager, url)
            let second = await Self.fetch(manager, url)
            try await eventually { reported.withLock { $0.count } == 2 }
            #expect(reported.withLock { $0 } == [.networkLoad, .localCache])  // the metrics block sees it too
            #expect(first.error == nil && second.error == nil)
            #expect(server.requestsReceived(forPath: "/cached/fresh") == 1)
            #expect(first.id != nil && second.id == first.id)
            #expect(second.response?.statusCode == 200)
            #expect(first.metrics?.resourceFetchType == .networkLoad)
            #expect(second.metrics?.resourceFetchType == .localCache)
            #expect(second.header("Age") != nil)
        }
    }

    @Test func aStaleEntryRevalidatesAndA304ServesTheStoredBody() async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil))
            // ETag → If-None-Match
            let tagged = server.sessionURL("/cached/etag?cc=max-age=0&etag=v1")
            let first = await Self.fetch(manager, tagged)
            let second = await Self.fetch(manager, tagged)
            #expect(server.requestsReceived(forPath: "/cached/etag") == 2)
            #expect(second.response?.statusCode == 200)
            #expect(second.id == first.id)
            #expect(second.header("X-Validated-With") == "If-None-Match")
            #expect(second.header("X-Revalidation-Id") != nil)  // merged from the 304
            #expect(second.header("ETag") == "\"v1\"")
            #expect(second.metrics?.revalidatedFromCache == true)
            #expect(second.metrics?.resourceFetchType == .networkLoad)
            // Last-Modified → If-Modified-Since (no-cache: stored, always validated)
            let dated = server.sessionURL("/cached/lm?cc=no-cache&lm=1700000000")
            let third = await Self.fetch(manager, dated)
            let fourth = await Self.fetch(manager, dated)
            #expect(server.requestsReceived(forPath: "/cached/lm") == 2)
            #expect(fourth.header("X-Validated-With") == "If-Modified-Since")
            #expect(fourth.id == third.id && fourth.id != nil)
        }
    }

    @Test func varyKeepsVariantsApart() async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil))
            let url = server.sessionURL("/cached/vary?cc=max-age=600&vary=X-Flavor")
            let a = await Self.fetch(manager, url, headers: ["X-Flavor": "apple"])
            let b = await Self.fetch(manager, url, headers: ["X-Flavor": "banana"])
            let a2 = await Self.fetch(manager, url, headers: ["X-Flavor": "apple"])
            let b2 = await Self.fetch(manager, url, headers: ["X-Flavor": "banana"])
            let none = await Self.fetch(manager, url)
            #expect(server.requestsReceived(forPath: "/cached/vary") == 3)
            #expect(a.json?["x-flavor"] as? String == "apple" && a2.id == a.id)
            #expect(b.json?["x-flavor"] as? String == "banana" && b2.id == b.id)
            #expect(a.id != b.id && none.id != a.id && none.id != b.id)
        }
    }

    @Test func noStoreIsNeverWritten() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory)
            let manager = Self.manager(cache)
            let url = server.sessionURL("/cached/nostore?cc=no-store,max-age=600")
            _ = await Self.fetch(manager, url)
            _ = await Self.fetch(manager, url, headers: ["Cache-Control": "max-stale"])
            #expect(server.requestsReceived(forPath: "/cached/nostore") == 2)
            #expect(cache.currentMemoryUsage == 0 && cache.currentDiskUsage == 0)
            let entries = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("entries").path)
            #expect(entries.isEmpty)
        }
    }

    /// A 401 or 407 is a challenge to the credentials the request carried (none, or stale ones):
    /// stored with a `max-age`, it answered the next request for the URL, the one carrying the
    /// credentials (the session's own answer to the challenge, an interceptor's refreshed
    /// token), which never reached the server. They are not stored.
    @Test(arguments: [401, 407]) func aChallengeIsNotStored(status: Int) async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil))
            let url = server.sessionURL("/cached/challenge\(status)?status=\(status)&cc=public,max-age=600")
            let first = await Self.fetch(manager, url)
            #expect(first.response?.statusCode == status)
            let second = await Self.fetch(manager, url, headers: ["Authorization": "Bearer fresh-token"])
            #expect(second.metrics?.resourceFetchType == .networkLoad)
            #expect(server.requestsReceived(forPath: "/cached/challenge\(status)") == 2)
        }
    }

    /// A response to a request with `Authorization` may be stored when it says
    /// `must-revalidate` or `s-maxage` (RFC 9111 §3.5), but it answers those credentials: one
    /// manager (and one cache) may send for several users, and another user's request, or one
    /// with no credentials, was served it from the cache. Such a response varies on
    /// `Authorization` as if the server had said so (`public` ones are shared as before), and
    /// a credential in a secondary key is kept as a digest, never as written, on disk.
    @Test func aResponseToOneUsersCredentialsIsNotServedToAnother() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let manager = Self.manager(HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory))
            let url = server.sessionURL("/cached/mine?cc=must-revalidate,max-age=600")
            let alice = await Self.fetch(manager, url, headers: ["Authorization": "Bearer alice-secret-token"])
            let bob = await Self.fetch(manager, url, headers: ["Authorization": "Bearer bob-secret-token"])
            let nobody = await Self.fetch(manager, url)
            let aliceAgain = await Self.fetch(manager, url, headers: ["Authorization": "Bearer alice-secret-token"])
            #expect(alice.id != nil && bob.id != alice.id && nobody.id != alice.id && nobody.id != bob.id)
            #expect(aliceAgain.id == alice.id && aliceAgain.metrics?.resourceFetchType == .localCache)
            #expect(server.requestsReceived(forPath: "/cached/mine") == 3)
            // A public response is the same for everyone.
            let shared = server.sessionURL("/cached/shared?cc=public,max-age=600")
            let first = await Self.fetch(manager, shared, headers: ["Authorization": "Bearer alice-secret-token"])
            let second = await Self.fetch(manager, shared, headers: ["Authorization": "Bearer bob-secret-token"])
            #expect(first.id != nil && second.id == first.id)
            // Vary: Authorization (or Cookie) from the server: the credential isn't written to disk.
            let varied = server.sessionURL("/cached/varied?cc=public,max-age=600&vary=Authorization,Cookie")
            _ = await Self.fetch(manager, varied, headers: ["Authorization": "Bearer alice-secret-token", "Cookie": "session=alice-cookie"])
            let entries = directory.appendingPathComponent("entries")
            let text = try FileManager.default.contentsOfDirectory(atPath: entries.path)
                .map { try String(decoding: Data(contentsOf: entries.appendingPathComponent($0)), as: UTF8.self) }.joined()
            #expect(!text.contains("secret-token") && !text.contains("alice-cookie"))
        }
    }

    @Test func aPostInvalidatesTheURLAndItsLocation() async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil))
            let url = server.sessionURL("/cached/item?cc=max-age=600")
            let other = server.sessionURL("/cached/other?cc=max-age=600")
            let first = await Self.fetch(manager, url)
            _ = await Self.fetch(manager, other)
            // The same URL (query included) is invalidated by a POST to it ...
            let posted = await Self.fetch(manager, url, method: "POST")
            #expect(posted.response?.statusCode == 200)
            // ... and a same-origin Location (here /cached/other?cc=max-age=600) by a POST elsewhere.
            _ = await Self.fetch(manager, server.sessionURL("/cached/poster?location=%2Fcached%2Fother%3Fcc%3Dmax-age%3D600"), method: "POST")
            let after = await Self.fetch(manager, url)
            _ = await Self.fetch(manager, other)
            #expect(server.requestsReceived(forPath: "/cached/item") == 3)  // GET, POST, GET again
            #expect(server.requestsReceived(forPath: "/cached/other") == 2)  // Location invalidated it
            #expect(after.id != first.id)
        }
    }

    @Test func eachCachePolicy() async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil))
            // .reloadIgnoringLocalCacheData: a fresh entry is not used (the new response is stored).
            let fresh = server.sessionURL("/cached/reload?cc=max-age=600")
            let stored = await Self.fetch(manager, fresh)
            let reloaded = await Self.fetch(manager, fresh, policy: .reloadIgnoringLocalCacheData)
            let afterReload = await Self.fetch(manager, fresh)
            #expect(server.requestsReceived(forPath: "/cached/reload") == 2)
            #expect(reloaded.id != stored.id && afterReload.id == reloaded.id)

            // .returnCacheDataElseLoad: a stale entry is used as is; nothing stored loads.
            let stale = server.sessionURL("/cached/elseload?cc=max-age=0")
            let loaded = await Self.fetch(manager, stale, policy: .returnCacheDataElseLoad)
            let reused = await Self.fetch(manager, stale, policy: .returnCacheDataElseLoad)
            #expect(server.requestsReceived(forPath: "/cached/elseload") == 1)
            #expect(reused.id == loaded.id && reused.metrics?.resourceFetchType == .localCache)

            // .returnCacheDataDontLoad: the stale entry is used; nothing stored fails without a request.
            let kept = await Self.fetch(manager, stale, policy: .returnCacheDataDontLoad)
            #expect(kept.id == loaded.id && server.requestsReceived(forPath: "/cached/elseload") == 1)
            let missing = await Self.fetch(manager, server.sessionURL("/cached/missing"), policy: .returnCacheDataDontLoad)
            guard case .notCached = missing.error as? CourierError else {
                Issue.record("expected CourierError.notCached, got \(String(describing: missing.error))")
                return
            }
            #expect(server.requestsReceived(forPath: "/cached/missing") == 0)

            // .useProtocolCachePolicy with only-if-cached: the same error when nothing fresh is stored.
            let onlyIfCached = await Self.fetch(manager, stale, headers: ["Cache-Control": "only-if-cached"])
            #expect((onlyIfCached.error as? CourierError).map { if case .notCached = $0 { true } else { false } } == true)
            #expect(server.requestsReceived(forPath: "/cached/elseload") == 1)
        }
    }

    @Test func aDiskCacheReopenedServesItsEntries() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let small = server.sessionURL("/cached/disk?cc=max-age=600")
            let large = server.sessionURL("/cached/large?cc=max-age=600&size=3000000")
            let first = await Self.fetch(Self.manager(HTTPCache(memoryCapacity: 0, diskCapacity: 64 << 20, directory: directory)), small)
            let firstLarge = await Self.fetch(
                Self.manager(HTTPCache(memoryCapacity: 0, diskCapacity: 64 << 20, directory: directory)), large)
            let reopened = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 64 << 20, directory: directory)
            #expect(reopened.currentDiskUsage > 3_000_000)
            let manager = Self.manager(reopened)
            let again = await Self.fetch(manager, small)
            let againLarge = await Self.fetch(manager, large)
            #expect(server.requestsReceived(forPath: "/cached/disk") == 1)
            #expect(server.requestsReceived(forPath: "/cached/large") == 1)
            #expect(again.id == first.id && again.metrics?.resourceFetchType == .localCache)
            #expect(againLarge.id == firstLarge.id && (againLarge.json?["padding"] as? String)?.count == 3_000_000)
        }
    }

    @Test func aCorruptedEntryFileIsIgnored() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let url = server.sessionURL("/cached/corrupt?cc=max-age=600")
            let first = await Self.fetch(Self.manager(HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)), url)
            let entries = directory.appendingPathComponent("entries")
            let files = try FileManager.default.contentsOfDirectory(atPath: entries.path)
            #expect(files.count == 1)  // the first response was stored: there is something to corrupt
            for file in files {
                try Data("not json at all".utf8).write(to: entries.appendingPathComponent(file))
            }
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
            let second = await Self.fetch(Self.manager(cache), url)
            #expect(second.error == nil && second.response?.statusCode == 200)
            #expect(second.id != first.id)
            #expect(server.requestsReceived(forPath: "/cached/corrupt") == 2)
            let third = await Self.fetch(Self.manager(cache), url)  // the new response was stored
            #expect(third.id == second.id && server.requestsReceived(forPath: "/cached/corrupt") == 2)
        }
    }

    @Test func sixtyFourConcurrentTasksOnOneURLStayConsistent() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 16 << 20, directory: directory)
            let manager = Self.manager(cache)
            let url = server.sessionURL("/cached/crowd?cc=max-age=600&size=20000")
            let results = await withTaskGroup(of: Fetched.self) { group in
                for _ in 0..<64 { group.addTask { await Self.fetch(manager, url) } }
                var all: [Fetched] = []
                for await result in group { all.append(result) }
                return all
            }
            #expect(results.allSatisfy { $0.error == nil && $0.response?.statusCode == 200 && $0.id != nil })
            #expect(results.allSatisfy { ($0.json?["padding"] as? String)?.count == 20000 })
            let sent = server.requestsReceived(forPath: "/cached/crowd")
            #expect(sent >= 1 && sent <= 64)
            let after = await Self.fetch(manager, url)
            #expect(after.metrics?.resourceFetchType == .localCache)
            #expect(results.contains { $0.id == after.id })
            #expect(server.requestsReceived(forPath: "/cached/crowd") == sent)
            let bodies = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("bodies").path)
            #expect(bodies.count == 1)
        }
    }

    /// The README's "HTTP cache" example, against the test server's `/cache/60`.
    @Test func readmeCacheExample() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.cache = HTTPCache(memoryCapacity: 4 << 20, diskCapacity: 64 << 20, directory: directory)
            let manager = URLSessionManager(configuration: configuration)

            let url = server.sessionURL("/cache/60")
            _ = try await manager.data(for: URLRequest(url: url))
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: url), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            #expect(recorder.first?.error == nil && recorder.first?.response?.statusCode == 200)
            #expect(task.metrics?.resourceFetchType == .localCache)

            let (_, response) = try await manager.data(for: URLRequest(url: url, cachePolicy: .returnCacheDataDontLoad))
            #expect(response.statusCode == 200)
            #expect(server.requestsReceived(forPath: "/cache/60") == 1)
        }
    }

    /// Download tasks use the cache too, and a large stored body is read back from its file (in
    /// chunks) for a 304 and for a hit.
    @Test func downloadTasksAndLargeBodiesComeFromDisk() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 64 << 20, directory: directory)
            let manager = Self.manager(cache)
            let url = server.sessionURL("/cached/big?cc=max-age=0&etag=big&size=5000000")
            func download() async throws -> (Data, SessionTask) {
                let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-dl-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: destination) }
                let recorder = CompletionRecorder()
                let task = manager.downloadTask(
                    with: URLRequest(url: url), destination: { _, _ in destination },
                    completionHandler: { response, file, error in recorder.handler(response, file, error) })
                task.resume()
                await recorder.wait()
                #expect(recorder.first?.error == nil, "\(String(describing: recorder.first?.error))")
                return (try Data(contentsOf: destination), task)
            }
            let (first, firstTask) = try await download()
            let (second, secondTask) = try await download()
            #expect(first.count > 5_000_000 && second == first)
            #expect(firstTask.metrics?.revalidatedFromCache == false)
            #expect(secondTask.metrics?.revalidatedFromCache == true)
            #expect(server.requestsReceived(forPath: "/cached/big") == 2)
            let hit = await Self.fetch(manager, url, policy: .returnCacheDataElseLoad)
            #expect(hit.metrics?.resourceFetchType == .localCache)
            #expect((hit.json?["padding"] as? String)?.count == 5_000_000)
            #expect(server.requestsReceived(forPath: "/cached/big") == 2)
            #expect(cache.currentMemoryUsage == 0 && cache.currentDiskUsage > 5_000_000)
        }
    }

    /// A stored body file is sent as the reader takes it: a stream that is not read holds the
    /// pump back (the file is not read ahead into memory), and cancelling mid-body ends the task.
    @Test func aStoredBodyFileFollowsTheReadersPace() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let manager = Self.manager(HTTPCache(memoryCapacity: 0, diskCapacity: 64 << 20, directory: directory))
            let url = server.sessionURL("/cached/paced?cc=max-age=600&size=16000000")
            let stored = await Self.fetch(manager, url)
            #expect(stored.error == nil)
            let (response, body) = try await manager.bytes(for: URLRequest(url: url))
            #expect(response.statusCode == 200)
            let task = try #require(body.task)
            var iterator = body.makeAsyncIterator()
            var total = try await iterator.next()?.count ?? 0
            let held = try await settled { task.countOfBytesReceived }
            #expect(held < 8_000_000, "the pump ran ahead of the reader: \(held) bytes")
            while let chunk = try await iterator.next() { total += chunk.count }
            #expect(total > 16_000_000)
            #expect(task.metrics?.resourceFetchType == .localCache)
            #expect(server.requestsReceived(forPath: "/cached/paced") == 1)

            let (_, second) = try await manager.bytes(for: URLRequest(url: url))
            var secondIterator = second.makeAsyncIterator()
            _ = try await secondIterator.next()
            let secondTask = try #require(second.task)
            secondTask.cancel()
            await #expect(throws: (any Error).self) {
                while try await secondIterator.next() != nil {}
            }
            try await eventually { secondTask.state == .completed }
            #expect(server.requestsReceived(forPath: "/cached/paced") == 1)
        }
    }
}
