@testable import Courier
import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import CourierTestServer
import Testing

/// The cache's files are written on each entry writer's own queue, not by the caller (the
/// engine's event loop): with that queue held up, `append` and `finish` still return at once
/// on an event loop, and a lookup made after the store waits for the files, then finds the
/// entry (read after store stays consistent).
@Suite("HTTP cache writes off the event loop")
struct CacheWritesOffTheEventLoopTests {
    @Test("append and finish return on the event loop while the disk work is held up; a lookup after it sees the entry")
    func writesRunOnTheWritersQueue() async throws {
        let directory = try HTTPCacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)  // disk only
        let key = "http://h/held"
        let body = HTTPCacheStoreTests.bytes(200_000)
        let writer = cache.makeWriter(for: HTTPCacheStoreTests.entry(key))
        let release = DispatchSemaphore(value: 0)
        writer.queue.sync {}  // the body file is made (queued by makeWriter) before the hold
        writer.queue.async { release.wait() }  // the disk is "slow" until released

        let loop = MultiThreadedEventLoopGroup.singleton.next()
        try await loop.submit {
            var offset = 0
            while offset < body.count {
                let end = min(body.count, offset + 10_000)
                writer.append(ByteBuffer(bytes: body[offset..<end]))
                offset = end
            }
            writer.finish()
        }.get()
        // Not a byte reached the disk yet (the body file, made before the hold, is empty): the
        // event loop did not write.
        let tmp = directory.appendingPathComponent("tmp")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []
        let sizes = names.map { name in
            ((try? FileManager.default.attributesOfItem(atPath: tmp.appendingPathComponent(name).path))?[.size] as? NSNumber)?
                .intValue ?? -1
        }
        #expect(sizes == [0], "\(names): \(sizes)")

        // A lookup now waits for the pending commit rather than missing the entry.
        let found = Mutex<[UInt8]?>(nil)
        let looked = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            found.withLock { $0 = HTTPCacheStoreTests.body(of: cache.stored(key: key, requestHeaders: [:])) }
            looked.signal()
        }
        #expect(looked.wait(timeout: .now() + .milliseconds(200)) == .timedOut, "the lookup did not wait for the store")
        release.signal()
        #expect(looked.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(found.withLock { $0 } == body, "the lookup after the store found the entry")
        #expect(cache.currentDiskUsage > body.count)
    }

    @Test("each request right after one that stored a disk-only entry is answered from it")
    func sessionReadsAfterStore() async throws {
        let directory = try HTTPCacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServer.withRunning { server in
            let manager = HTTPCacheSessionTests.manager(HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory))
            for index in 0..<20 {
                let url = server.sessionURL("/cached/after\(index)?cc=max-age=600")
                let first = await HTTPCacheSessionTests.fetch(manager, url)
                let second = await HTTPCacheSessionTests.fetch(manager, url)
                #expect(first.error == nil && second.error == nil)
                #expect(second.metrics?.resourceFetchType == .localCache, "request \(index)")
                #expect(first.id != nil && second.id == first.id)
                #expect(server.requestsReceived(forPath: "/cached/after\(index)") == 1)
            }
        }
    }
}
