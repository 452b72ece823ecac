@testable import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import Testing

/// The cache's stores against real files in temporary folders: writing and reading back,
/// reopening, damaged entries, eviction, removal and concurrent writers.
@Suite("HTTP cache storage")
struct HTTPCacheStoreTests {
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("CourierCacheTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A cache that keeps entries only on disk (in `directory`), or only in memory.
    static func cache(onDisk: Bool, in directory: URL) -> HTTPCache {
        onDisk
            ? HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            : HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil)
    }

    static func entry(_ key: String, varied: [String: String?] = [:]) -> CacheEntry {
        var entry = CacheEntry(
            key: key, status: 200, reason: "OK", headerFields: [], varied: varied, requestTime: Date(), responseTime: Date(),
            bodyLength: 0, bodyID: "")
        entry.headers = ["Cache-Control": "max-age=600", "Content-Type": "text/plain"]
        return entry
    }

    /// Writes `body` through a writer in chunks, as a response would arrive, and returns once
    /// the entry is stored (its files written on the writer's queue), as a task ends only then.
    static func store(_ cache: HTTPCache, _ entry: CacheEntry, body: [UInt8], chunk: Int = 1000) {
        let writer = cache.makeWriter(for: entry)
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + chunk)
            writer.append(ByteBuffer(bytes: body[offset..<end]))
            offset = end
        }
        let stored = DispatchSemaphore(value: 0)
        writer.finish { stored.signal() }
        stored.wait()
    }

    static func body(of stored: (entry: CacheEntry, body: HTTPCache.StoredBody)?) -> [UInt8]? {
        switch stored?.body {
        case .data(let data): return Array(data)
        case .file(let handle, _):
            defer { try? handle.close() }
            return (try? handle.readToEnd()).map { Array($0) } ?? []
        case nil: return nil
        }
    }

    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }

    @Test func memoryOnlyStoresAndServes() {
        let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil)
        Self.store(cache, Self.entry("http://h/a"), body: Self.bytes(5000))
        let stored = cache.stored(key: "http://h/a", requestHeaders: [:])
        #expect(Self.body(of: stored) == Self.bytes(5000))
        #expect(stored?.entry.headers["content-length"] == ["5000"])
        #expect(cache.currentMemoryUsage >= 5000)
        #expect(cache.currentDiskUsage == 0)
        cache.removeAll()
        #expect(cache.stored(key: "http://h/a", requestHeaders: [:]) == nil)
        #expect(cache.currentMemoryUsage == 0)
    }

    @Test func diskEntriesSurviveReopening() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            Self.store(cache, Self.entry("http://h/a"), body: Self.bytes(300_000))
            Self.store(cache, Self.entry("http://h/v", varied: ["accept": CacheVary.digest(ofNormalized: "a")]), body: Self.bytes(10, seed: 1))
            Self.store(cache, Self.entry("http://h/v", varied: ["accept": CacheVary.digest(ofNormalized: "b")]), body: Self.bytes(10, seed: 2))
            #expect(cache.currentDiskUsage > 300_000)
        }
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        #expect(reopened.currentDiskUsage > 300_000)
        #expect(Self.body(of: reopened.stored(key: "http://h/a", requestHeaders: [:])) == Self.bytes(300_000))
        #expect(Self.body(of: reopened.stored(key: "http://h/v", requestHeaders: ["Accept": "a"])) == Self.bytes(10, seed: 1))
        #expect(Self.body(of: reopened.stored(key: "http://h/v", requestHeaders: ["Accept": "b"])) == Self.bytes(10, seed: 2))
        #expect(reopened.stored(key: "http://h/v", requestHeaders: ["Accept": "c"]) == nil)
        reopened.removeCachedResponse(for: URLRequest(url: URL(string: "http://h/v")!))
        #expect(reopened.stored(key: "http://h/v", requestHeaders: ["Accept": "a"]) == nil)
        #expect(Self.body(of: reopened.stored(key: "http://h/a", requestHeaders: [:])) == Self.bytes(300_000))
    }

    @Test func damagedEntriesAreIgnoredAndRemoved() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            Self.store(cache, Self.entry("http://h/garbled"), body: Self.bytes(100))
            Self.store(cache, Self.entry("http://h/truncated"), body: Self.bytes(100))
            Self.store(cache, Self.entry("http://h/good"), body: Self.bytes(100))
        }
        let entries = directory.appendingPathComponent("entries")
        let garbled = entries.appendingPathComponent(DiskCacheStore.entryName(key: "http://h/garbled", varied: [:]) + ".meta")
        try Data("{\"version\":1,\"entry\":{\"key\":".utf8).write(to: garbled)  // a half-written metadata file
        let truncatedMeta = entries.appendingPathComponent(DiskCacheStore.entryName(key: "http://h/truncated", varied: [:]) + ".meta")
        let truncatedEntry = try JSONDecoder().decode(Envelope.self, from: Data(contentsOf: truncatedMeta)).entry
        let truncatedBody = directory.appendingPathComponent("bodies").appendingPathComponent(truncatedEntry.bodyID)
        try Data(Self.bytes(40)).write(to: truncatedBody)  // a body cut short
        // A body left half-written (the store names them by lowercase UUID).
        try Data("junk".utf8).write(to: directory.appendingPathComponent("tmp").appendingPathComponent(UUID().uuidString.lowercased()))

        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        #expect(reopened.stored(key: "http://h/garbled", requestHeaders: [:]) == nil)
        #expect(reopened.stored(key: "http://h/truncated", requestHeaders: [:]) == nil)
        #expect(Self.body(of: reopened.stored(key: "http://h/good", requestHeaders: [:])) == Self.bytes(100))
        #expect(!FileManager.default.fileExists(atPath: garbled.path))
        #expect(!FileManager.default.fileExists(atPath: truncatedMeta.path))
        #expect(!FileManager.default.fileExists(atPath: truncatedBody.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("bodies").path).count == 1)
    }

    /// The metadata file's shape, to find a body file in a test.
    struct Envelope: Decodable {
        var entry: CacheEntry
    }

    /// A body that pushes out many small ones (more than the few found by a scan each: the rest
    /// come from one ordering by last use) still evicts least recently used first: the entries
    /// read since they were stored stay, the others go, and the usage fits.
    @Test func aLargeInsertEvictsManyInLeastRecentlyUsedOrder() {
        let capacity = 100_000
        let cache = HTTPCache(memoryCapacity: capacity, diskCapacity: 0, directory: nil)
        let cost = MemoryCacheStore.cost(Self.entry("http://h/100"), bodyCount: 100)
        let count = capacity * 9 / 10 / cost  // fits: nothing evicted while filling
        for index in 0..<count { Self.store(cache, Self.entry("http://h/\(index)"), body: Self.bytes(100)) }
        let kept = [3, 17, 30]
        for index in kept { #expect(cache.stored(key: "http://h/\(index)", requestHeaders: [:]) != nil) }
        // The largest body the memory store takes (a tenth of it): room for it means many victims.
        Self.store(cache, Self.entry("http://h/large"), body: Self.bytes(capacity / 10))
        #expect(cache.currentMemoryUsage <= capacity)
        #expect(Self.body(of: cache.stored(key: "http://h/large", requestHeaders: [:])) == Self.bytes(capacity / 10))
        let remaining = (0..<count).filter { cache.stored(key: "http://h/\($0)", requestHeaders: [:]) != nil }
        #expect(count - remaining.count > 8, "evicted \(count - remaining.count) of \(count)")
        for index in kept { #expect(remaining.contains(index), "\(index) was read last and evicted") }
        // Those evicted are the oldest: every survivor not read again is newer than every victim.
        let victims = Set(0..<count).subtracting(remaining)
        let unread = remaining.filter { !kept.contains($0) }
        #expect(unread.allSatisfy { survivor in victims.allSatisfy { $0 < survivor } }, "survivors \(remaining)")
    }

    @Test func evictionKeepsUsageWithinCapacity() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = HTTPCache(memoryCapacity: 50_000, diskCapacity: 100_000, directory: directory)
        for index in 0..<40 {
            Self.store(cache, Self.entry("http://h/\(index)"), body: Self.bytes(4_000 + index))
            #expect(cache.currentDiskUsage <= 100_000)
            #expect(cache.currentMemoryUsage <= 50_000)
            if index >= 1 {
                // Touch the first entry: least recently used goes first, so it stays.
                #expect(cache.stored(key: "http://h/0", requestHeaders: [:]) != nil)
            }
        }
        #expect(cache.stored(key: "http://h/1", requestHeaders: [:]) == nil)  // evicted
        #expect(Self.body(of: cache.stored(key: "http://h/39", requestHeaders: [:])) == Self.bytes(4_039))
        let bodies = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("bodies").path)
        let metas = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("entries").path)
        #expect(bodies.count == metas.count)
        #expect(bodies.count < 40)
        // A body larger than the whole disk capacity is not stored at all.
        Self.store(cache, Self.entry("http://h/huge"), body: Self.bytes(150_000), chunk: 65_536)
        #expect(cache.stored(key: "http://h/huge", requestHeaders: [:]) == nil)
        #expect(cache.currentDiskUsage <= 100_000)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path).isEmpty)
    }

    /// Stores `count` entries (`http://h/0`…, 4,000-byte bodies) in a disk cache in `directory`,
    /// then dates each entry's metadata file with `date(index)`, as a later open reads them.
    static func storeDatedEntries(_ count: Int, in directory: URL, date: (Int) -> Date) throws {
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            for index in 0..<count { store(cache, entry("http://h/\(index)"), body: bytes(4_000, seed: UInt8(index))) }
        }
        let entries = directory.appendingPathComponent("entries")
        for index in 0..<count {
            let meta = entries.appendingPathComponent(DiskCacheStore.entryName(key: "http://h/\(index)", varied: [:]) + ".meta")
            try FileManager.default.setAttributes([.modificationDate: date(index)], ofItemAtPath: meta.path)
        }
    }

    /// Opening a folder that holds more than the capacity reads the newest entries that fit and
    /// removes the older ones unread: what is decoded is bounded by the capacity, not by how many
    /// files the folder holds (a shared or hostile folder may hold very many).
    @Test func reopeningReadsOnlyTheNewestEntriesThatFit() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let count = 30
        // Entry i was used i minutes after the first: the last ones are the newest.
        let start = Date(timeIntervalSinceNow: -86_400)
        try Self.storeDatedEntries(count, in: directory) { start.addingTimeInterval(Double($0) * 60) }
        let entries = directory.appendingPathComponent("entries")
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 20_000, directory: directory)
        let disk = try #require(reopened.disk)
        let kept = (0..<count).filter { reopened.stored(key: "http://h/\($0)", requestHeaders: [:]) != nil }
        #expect(!kept.isEmpty)
        #expect(kept == Array((count - kept.count)..<count), "the newest entries are the ones kept")
        #expect(Self.body(of: reopened.stored(key: "http://h/\(count - 1)", requestHeaders: [:])) == Self.bytes(4_000, seed: UInt8(count - 1)))
        #expect(reopened.currentDiskUsage <= 20_000)
        let read = disk.metadataFilesRead.load(ordering: .relaxed)
        #expect(read <= kept.count + 1, "read \(read) metadata files to keep \(kept.count)")
        let metas = try FileManager.default.contentsOfDirectory(atPath: entries.path)
        let bodies = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("bodies").path)
        #expect(metas.count == kept.count)
        #expect(bodies.count == kept.count)
    }

    /// Reopening with every entry's time the same (a copied folder, a coarse clock), or the
    /// store itself with a capacity of zero (`HTTPCache` opens none then): what is kept fits,
    /// and every kept entry has its body and every body its entry (no file left without the
    /// other).
    @Test(arguments: [0, 20_000])
    func reopeningWithEqualTimesOrNoCapacityStaysConsistent(capacity: Int) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let count = 12
        let same = Date(timeIntervalSinceNow: -3_600)
        try Self.storeDatedEntries(count, in: directory) { _ in same }
        var kept: [Int] = []
        if capacity == 0 {
            let store = try #require(DiskCacheStore(directory: directory, capacity: 0))
            #expect(store.usage == 0)
        } else {
            let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: capacity, directory: directory)
            kept = (0..<count).filter { reopened.stored(key: "http://h/\($0)", requestHeaders: [:]) != nil }
            for index in kept {
                #expect(Self.body(of: reopened.stored(key: "http://h/\(index)", requestHeaders: [:])) == Self.bytes(4_000, seed: UInt8(index)))
            }
            #expect(reopened.currentDiskUsage <= capacity)
            #expect(!kept.isEmpty && kept.count < count)
        }
        let metas = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("entries").path)
        let bodies = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("bodies").path)
        #expect(metas.count == kept.count)
        #expect(bodies.count == kept.count)
    }

    @Test func concurrentWritersAndReadersStayConsistent() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = HTTPCache(memoryCapacity: 100_000, diskCapacity: 10 << 20, directory: directory)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                group.addTask {
                    // Each writer stores a whole, self-consistent body: 50 KiB of one byte value.
                    Self.store(cache, Self.entry("http://h/same"), body: [UInt8](repeating: UInt8(index), count: 50_000))
                    if let body = Self.body(of: cache.stored(key: "http://h/same", requestHeaders: [:])) {
                        #expect(body.count == 50_000)
                        #expect(Set(body).count == 1)
                    }
                }
            }
        }
        let final = try #require(Self.body(of: cache.stored(key: "http://h/same", requestHeaders: [:])))
        #expect(final.count == 50_000 && Set(final).count == 1)
        let bodies = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("bodies").path)
        #expect(bodies.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path).isEmpty)
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        #expect(reopened.currentDiskUsage == cache.currentDiskUsage)
    }

    @Test func notModifiedRefreshKeepsTheBody() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        // Keyed as the cache keys a non-public response (a refresh drops one keyed on less).
        Self.store(cache, Self.entry("http://h/r", varied: ["authorization": String?.none, "cookie": String?.none]), body: Self.bytes(1234))
        var entry = try #require(cache.stored(key: "http://h/r", requestHeaders: [:])).entry
        entry = CacheValidation.merged(entry, notModifiedHeaders: ["X-Fresh": "yes"], requestTime: Date(), responseTime: Date())
        cache.refresh(entry)
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 1 << 20, directory: directory)
        let stored = reopened.stored(key: "http://h/r", requestHeaders: [:])
        #expect(stored?.entry.headers["x-fresh"] == ["yes"])
        #expect(Self.body(of: stored) == Self.bytes(1234))
    }
}
