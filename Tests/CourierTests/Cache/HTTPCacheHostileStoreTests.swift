@testable import Courier
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import Synchronization
import Testing

/// The disk store opened on a folder someone else wrote to: metadata files that name paths
/// outside the folder, symlinks, huge or lying metadata, bodies of the wrong length, names
/// that are not UTF-8. Each such entry is dropped (and its files removed) on open; nothing
/// outside the folder is read or removed; the good entry next to them still serves.
@Suite("HTTP cache storage, hostile folder")
struct HTTPCacheHostileStoreTests {
    typealias Store = HTTPCacheStoreTests

    /// The metadata file's full shape, to write hostile ones.
    struct Envelope: Codable {
        var version: Int
        var entry: CacheEntry
    }

    /// A folder with a good entry at `http://h/good` and one at `http://h/bad` (100-byte
    /// bodies); `tamper` then changes the bad one's metadata; returns the folder and the
    /// bad entry's metadata and body files.
    static func folder(in parent: URL? = nil, tamper: (inout CacheEntry) -> Void) throws -> (directory: URL, meta: URL, body: URL) {
        let directory = try parent.map { parent in
            let url = parent.appendingPathComponent("CourierCacheTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        } ?? Store.temporaryDirectory()
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            Store.store(cache, Store.entry("http://h/good"), body: Store.bytes(100))
            Store.store(cache, Store.entry("http://h/bad"), body: Store.bytes(100))
        }
        let meta = directory.appendingPathComponent("entries")
            .appendingPathComponent(DiskCacheStore.entryName(key: "http://h/bad", varied: [:]) + ".meta")
        var envelope = try JSONDecoder().decode(Envelope.self, from: Data(contentsOf: meta))
        let body = directory.appendingPathComponent("bodies").appendingPathComponent(envelope.entry.bodyID)
        tamper(&envelope.entry)
        try JSONEncoder().encode(envelope).write(to: meta)
        return (directory, meta, body)
    }

    /// What ``victimOutside()`` writes: 100 bytes, not those of the stored bodies.
    static let victimBytes = Data(Store.bytes(100, seed: 9))

    /// A folder outside any cache holding `victim` (``victimBytes``), a file a hostile entry
    /// points at; the caller removes the folder.
    static func victimOutside() throws -> (folder: URL, victim: URL) {
        let folder = try Store.temporaryDirectory()
        let victim = folder.appendingPathComponent("victim")
        try victimBytes.write(to: victim)
        return (folder, victim)
    }

    /// Opens `directory` again: the bad entry is gone, the good one serves.
    static func expectOnlyTheGoodEntry(in directory: URL, sourceLocation: SourceLocation = #_sourceLocation) {
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        #expect(reopened.stored(key: "http://h/bad", requestHeaders: [:]) == nil, sourceLocation: sourceLocation)
        #expect(
            Store.body(of: reopened.stored(key: "http://h/good", requestHeaders: [:])) == Store.bytes(100),
            sourceLocation: sourceLocation)
    }

    @Test func aStatusNoResponseHeadCanCarryIsDropped() throws {
        // HTTPResponseStatus(statusCode: -1) traps (UInt(-1)) when the hit is replayed.
        for status in [-1, 0, 99, 1000, Int.max] {
            let (directory, meta, _) = try Self.folder { $0.status = status }
            defer { try? FileManager.default.removeItem(at: directory) }
            Self.expectOnlyTheGoodEntry(in: directory)
            #expect(!FileManager.default.fileExists(atPath: meta.path), "status \(status)")
        }
    }

    @Test func aContentLengthOtherThanTheBodyIsDropped() throws {
        // The replayed head would announce more (or fewer) bytes than are delivered.
        for lengths in [["5000"], ["-1"], ["100", "100"], []] {
            let (directory, _, _) = try Self.folder { entry in
                var headers = entry.headers
                headers.remove(name: "content-length")
                for length in lengths { headers.add(name: "Content-Length", value: length) }
                entry.headers = headers
            }
            defer { try? FileManager.default.removeItem(at: directory) }
            Self.expectOnlyTheGoodEntry(in: directory)
        }
    }

    @Test func headerFieldsNoServerCouldSendAreDropped() throws {
        // A stored ETag becomes the next request's If-None-Match: one holding CR, LF or NUL is
        // refused by the engine, so every revalidation of the URL would fail for as long as the
        // entry stays. Neither HTTP/1.1 nor HTTP/2 delivers such a field: only an edit can.
        let hostile: [(String, String)] = [
            ("ETag", "\"a\"\r\nX-Injected: 1"), ("ETag", "\"a\u{0}\""), ("X-Other", "a\nb"),
            ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT\r\nX: y"), ("Bad Name", "v"), ("", "v"), ("X:Y", "v"),
        ]
        for (name, value) in hostile {
            let (directory, meta, _) = try Self.folder { entry in
                var headers = entry.headers
                headers.add(name: name, value: value)
                entry.headers = headers
            }
            defer { try? FileManager.default.removeItem(at: directory) }
            Self.expectOnlyTheGoodEntry(in: directory)
            #expect(!FileManager.default.fileExists(atPath: meta.path), "\(name): \(value)")
        }
        // A reason phrase is sent back to the caller as the status line's: the same bytes refused.
        let (directory, _, _) = try Self.folder { $0.reason = "OK\r\nX-Injected: 1" }
        defer { try? FileManager.default.removeItem(at: directory) }
        Self.expectOnlyTheGoodEntry(in: directory)
    }

    @Test func aBodyIDNamingAPathElsewhereIsDropped() throws {
        let (outside, victim) = try Self.victimOutside()
        defer { try? FileManager.default.removeItem(at: outside) }
        for id in ["../../\(outside.lastPathComponent)/victim", victim.path, "", ".", "..", "bodies"] {
            let (directory, meta, _) = try Self.folder { $0.bodyID = id }
            defer { try? FileManager.default.removeItem(at: directory) }
            Self.expectOnlyTheGoodEntry(in: directory)
            #expect(!FileManager.default.fileExists(atPath: meta.path), "bodyID \(id)")
        }
        #expect(FileManager.default.fileExists(atPath: victim.path))
    }

    @Test func bodyLengthsThatDisagreeWithTheFileAreDropped() throws {
        for length: Int64 in [-1, 0, 99, 101, Int64.max, Int64.min] {
            let (directory, _, body) = try Self.folder { $0.bodyLength = length }
            defer { try? FileManager.default.removeItem(at: directory) }
            Self.expectOnlyTheGoodEntry(in: directory)
            #expect(!FileManager.default.fileExists(atPath: body.path), "length \(length)")
        }
        // The file itself shorter or longer than the metadata says.
        for count in [0, 40, 101, 5000] {
            let (directory, _, body) = try Self.folder { _ in }
            defer { try? FileManager.default.removeItem(at: directory) }
            try Data(Store.bytes(count)).write(to: body)
            Self.expectOnlyTheGoodEntry(in: directory)
        }
    }

    /// A body as long as a file can be (sparse, on tmpfs, which allows it) with metadata that
    /// agrees: its size added to the others' overflowed and trapped on open. It can never fit
    /// the capacity, so it is dropped like a bad entry, and the older good one is kept.
    @Test(.enabled(if: FileManager.default.isWritableFile(atPath: "/dev/shm")))
    func aBodyAsLongAsAFileCanBeIsDropped() throws {
        let (directory, meta, body) = try Self.folder(in: URL(fileURLWithPath: "/dev/shm")) { entry in
            entry.bodyLength = Int64.max
            var headers = entry.headers
            headers.replaceOrAdd(name: "Content-Length", value: String(Int64.max))
            entry.headers = headers
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        try #require(truncate(body.path, off_t(Int64.max)) == 0)
        Self.expectOnlyTheGoodEntry(in: directory)
        #expect(!FileManager.default.fileExists(atPath: meta.path))
        #expect(!FileManager.default.fileExists(atPath: body.path))
    }

    @Test func symlinksAreNotFollowed() throws {
        let (outside, victim) = try Self.victimOutside()
        defer { try? FileManager.default.removeItem(at: outside) }
        // The body file a link to a file of the right length elsewhere.
        do {
            let (directory, _, body) = try Self.folder { _ in }
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.removeItem(at: body)
            try FileManager.default.createSymbolicLink(at: body, withDestinationURL: victim)
            Self.expectOnlyTheGoodEntry(in: directory)
        }
        // The metadata file a link to a good metadata file elsewhere.
        do {
            let (directory, meta, _) = try Self.folder { _ in }
            defer { try? FileManager.default.removeItem(at: directory) }
            let elsewhere = outside.appendingPathComponent("meta")
            try FileManager.default.moveItem(at: meta, to: elsewhere)
            try FileManager.default.createSymbolicLink(at: meta, withDestinationURL: elsewhere)
            Self.expectOnlyTheGoodEntry(in: directory)
            #expect(FileManager.default.fileExists(atPath: elsewhere.path))
        }
        #expect(try Data(contentsOf: victim) == Self.victimBytes)
    }

    /// A body file swapped, while the cache is open, for a link to a file of the right length
    /// elsewhere or for a FIFO: the hit is dropped, the link not followed, the FIFO not waited
    /// on (opening one for reading blocks until a writer comes, under the store's lock).
    @Test func aBodySwappedWhileOpenForALinkOrAFIFOIsNotRead() throws {
        let (outside, victim) = try Self.victimOutside()
        defer { try? FileManager.default.removeItem(at: outside) }
        for swap in ["link", "fifo"] {
            let directory = try Store.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            Store.store(cache, Store.entry("http://h/bad"), body: Store.bytes(100))
            Store.store(cache, Store.entry("http://h/good"), body: Store.bytes(100))
            let meta = directory.appendingPathComponent("entries")
                .appendingPathComponent(DiskCacheStore.entryName(key: "http://h/bad", varied: [:]) + ".meta")
            let bodyID = try JSONDecoder().decode(Envelope.self, from: Data(contentsOf: meta)).entry.bodyID
            let body = directory.appendingPathComponent("bodies").appendingPathComponent(bodyID)
            try FileManager.default.removeItem(at: body)
            if swap == "link" {
                try FileManager.default.createSymbolicLink(at: body, withDestinationURL: victim)
            } else {
                try #require(mkfifo(body.path, 0o600) == 0)
            }
            // On another thread, so a lookup blocked on the FIFO can be released (by opening its
            // writing end) and reported instead of hanging the run.
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<[UInt8]??>(nil)
            Thread.detachNewThread {
                let stored = Store.body(of: cache.stored(key: "http://h/bad", requestHeaders: [:]))
                result.withLock { $0 = .some(stored) }
                done.signal()
            }
            if done.wait(timeout: .now() + 10) == .timedOut {
                Issue.record("the lookup of a body swapped for a FIFO blocked")
                let writer = open(body.path, O_WRONLY | O_NONBLOCK)
                done.wait()
                if writer >= 0 { close(writer) }
            }
            #expect(result.withLock { $0 } == .some(nil), "\(swap)")
            #expect(Store.body(of: cache.stored(key: "http://h/good", requestHeaders: [:])) == Store.bytes(100), "\(swap)")
        }
        #expect(try Data(contentsOf: victim) == Self.victimBytes)
    }

    /// A directory, or a link to one outside the cache, where a metadata file or a body is
    /// (named as the store names them): the entry is dropped, and nothing in the directory or
    /// behind the link is read or removed.
    @Test func directoriesAndLinksToThemNamedLikeEntriesAreNotEmptied() throws {
        let (outside, victim) = try Self.victimOutside()
        defer { try? FileManager.default.removeItem(at: outside) }
        let manager = FileManager.default
        for (asLink, whichFile) in [(false, "meta"), (true, "meta"), (false, "body"), (true, "body")] {
            let (directory, meta, body) = try Self.folder { _ in }
            defer { try? manager.removeItem(at: directory) }
            let replaced = whichFile == "meta" ? meta : body
            try manager.removeItem(at: replaced)
            let inside = replaced.appendingPathComponent("inside")
            if asLink {
                try manager.createSymbolicLink(at: replaced, withDestinationURL: outside)
            } else {
                try manager.createDirectory(at: replaced, withIntermediateDirectories: false)
                try Self.victimBytes.write(to: inside)
            }
            let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            #expect(reopened.stored(key: "http://h/bad", requestHeaders: [:]) == nil, "\(whichFile) link \(asLink)")
            #expect(Store.body(of: reopened.stored(key: "http://h/good", requestHeaders: [:])) == Store.bytes(100))
            #expect((try? Data(contentsOf: victim)) == Self.victimBytes, "\(whichFile) link \(asLink): the file behind the link")
            if !asLink {
                #expect((try? Data(contentsOf: inside)) == Self.victimBytes, "\(whichFile): the file in the directory")
            }
        }
    }

    @Test func hugeOrGarbledMetadataIsDropped() throws {
        for contents in [
            Data(count: 2 << 20),  // 2 MiB of zeros
            Data("{\"version\":1,\"entry\":{\"key\":\"".utf8) + Data(repeating: 0x61, count: 3 << 20) + Data("\"}}".utf8),
            Data("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[".utf8),
            Data("{\"version\":2}".utf8),
            Data([0xFF, 0xFE, 0x00]),
        ] {
            let (directory, meta, body) = try Self.folder { _ in }
            defer { try? FileManager.default.removeItem(at: directory) }
            try contents.write(to: meta)
            Self.expectOnlyTheGoodEntry(in: directory)
            #expect(!FileManager.default.fileExists(atPath: body.path))
        }
    }

    @Test func namesThatAreNotUTF8AreSkipped() throws {
        let (directory, _, _) = try Self.folder { _ in }
        defer { try? FileManager.default.removeItem(at: directory) }
        for folder in ["entries", "bodies", "tmp"] {
            let path = Array(directory.appendingPathComponent(folder).path.utf8) + [0x2F, 0xFF, 0xFE, 0x2E, 0x6D, 0x65, 0x74, 0x61, 0]
            let descriptor = path.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o600) }
            }
            try #require(descriptor >= 0)
            close(descriptor)
        }
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        #expect(Store.body(of: reopened.stored(key: "http://h/good", requestHeaders: [:])) == Store.bytes(100))
        #expect(Store.body(of: reopened.stored(key: "http://h/bad", requestHeaders: [:])) == Store.bytes(100))
    }
}

/// When a resource's `Vary` changes, older variants stay stored next to the new response and a
/// request can match several: the most recent response is the one served (RFC 9111 §4.1).
@Suite("HTTP cache storage, several matching variants")
struct HTTPCacheVariantChoiceTests {
    typealias Store = HTTPCacheStoreTests

    @Test(arguments: [false, true]) func theMostRecentMatchingVariantIsServed(onDisk: Bool) throws {
        let directory = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = Store.cache(onDisk: onDisk, in: directory)
        var old = Store.entry("http://h/v", varied: ["accept": CacheVary.digest(ofNormalized: "a")])
        old.responseTime = Date(timeIntervalSinceNow: -60)
        Store.store(cache, old, body: Store.bytes(10, seed: 1))
        // The server dropped its Vary: the new response fits every request.
        Store.store(cache, Store.entry("http://h/v"), body: Store.bytes(10, seed: 2))
        for _ in 0..<4 {  // a Set's order is not the insertion order: ask more than once
            #expect(Store.body(of: cache.stored(key: "http://h/v", requestHeaders: ["Accept": "a"])) == Store.bytes(10, seed: 2))
        }
        #expect(Store.body(of: cache.stored(key: "http://h/v", requestHeaders: ["Accept": "b"])) == Store.bytes(10, seed: 2))
        // And the other way round: the newer response varies, the older one didn't.
        var plain = Store.entry("http://h/w")
        plain.responseTime = Date(timeIntervalSinceNow: -60)
        Store.store(cache, plain, body: Store.bytes(10, seed: 3))
        Store.store(cache, Store.entry("http://h/w", varied: ["accept": CacheVary.digest(ofNormalized: "a")]), body: Store.bytes(10, seed: 4))
        #expect(Store.body(of: cache.stored(key: "http://h/w", requestHeaders: ["Accept": "a"])) == Store.bytes(10, seed: 4))
        #expect(Store.body(of: cache.stored(key: "http://h/w", requestHeaders: ["Accept": "b"])) == Store.bytes(10, seed: 3))
    }

    @Test func aNewerVariantOnDiskWinsOverAnOlderOneInMemory() throws {
        let directory = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Memory keeps bodies up to 100 KiB: the newer response only goes to disk.
        let cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 10 << 20, directory: directory)
        var old = Store.entry("http://h/v", varied: ["accept": CacheVary.digest(ofNormalized: "a")])
        old.responseTime = Date(timeIntervalSinceNow: -60)
        Store.store(cache, old, body: Store.bytes(10, seed: 1))
        Store.store(cache, Store.entry("http://h/v"), body: Store.bytes(200_000, seed: 2))
        #expect(Store.body(of: cache.stored(key: "http://h/v", requestHeaders: ["Accept": "a"])) == Store.bytes(200_000, seed: 2))
        // The same response in memory and on disk is served from memory.
        Store.store(cache, Store.entry("http://h/s"), body: Store.bytes(10, seed: 3))
        guard case .data = cache.stored(key: "http://h/s", requestHeaders: [:])?.body else {
            Issue.record("a small body stored in both was not served from memory")
            return
        }
    }
}

/// `Set-Cookie` is never kept in a stored head, whichever way it comes: a hit replays the head,
/// and replaying a cookie would set it again over whatever it has become since.
@Suite("HTTP cache storage, Set-Cookie")
struct HTTPCacheSetCookieTests {
    typealias Store = HTTPCacheStoreTests

    @Test(arguments: [false, true]) func neitherAResponseNorA304LeavesASetCookieStored(onDisk: Bool) throws {
        let directory = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = Store.cache(onDisk: onDisk, in: directory)
        // Keyed as the cache keys a non-public response (a refresh drops one keyed on less).
        var entry = Store.entry("http://h/c", varied: ["authorization": String?.none, "cookie": String?.none])
        entry.headers.add(name: "Set-Cookie", value: "session=stored")
        Store.store(cache, entry, body: Store.bytes(10))
        let stored = try #require(cache.stored(key: "http://h/c", requestHeaders: [:])).entry
        #expect(stored.headers["set-cookie"].isEmpty)
        // A 304 carrying one: merged into the head the validating task sees, not into the store.
        let merged = CacheValidation.merged(
            stored, notModifiedHeaders: ["Set-Cookie": "session=from-304", "X-Fresh": "yes"], requestTime: Date(), responseTime: Date())
        #expect(merged.headers["set-cookie"] == ["session=from-304"])
        cache.refresh(merged)
        let refreshed = try #require(cache.stored(key: "http://h/c", requestHeaders: [:])).entry
        #expect(refreshed.headers["set-cookie"].isEmpty)
        #expect(refreshed.headers["x-fresh"] == ["yes"])
    }
}

/// A cache opened on a folder that already holds other files (`courier --cache ~` with a
/// `~/tmp`): opening sweeps `tmp/`, `bodies/` and `entries/`, but only of names the store
/// writes; anything else stays.
@Suite("HTTP cache storage, permissions")
struct HTTPCacheStorePermissionTests {
    typealias Store = HTTPCacheStoreTests

    static func mode(_ url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
    }

    /// The store keeps private responses (`Cache-Control: private`, pages fetched with cookies)
    /// and their URLs: the folders it makes and the files it writes are the owner's only
    /// (0700 and 0600, as XDG asks of a cache folder made on first use), whatever the umask.
    @Test func theFoldersAndFilesTheStoreMakesAreTheOwnersOnly() throws {
        let parent = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("made/by/the/cache")
        let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        Store.store(cache, Store.entry("http://h/private"), body: Store.bytes(100))
        #expect(Store.body(of: cache.stored(key: "http://h/private", requestHeaders: [:])) == Store.bytes(100))
        for folder in [directory, directory.appendingPathComponent("entries"), directory.appendingPathComponent("bodies"),
            directory.appendingPathComponent("tmp")]
        {
            #expect(Self.mode(folder) == 0o700, "\(folder.path)")
        }
        let files = ["entries", "bodies"].flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? [])
                .map { directory.appendingPathComponent(folder).appendingPathComponent($0) }
        }
        #expect(files.count == 2)
        for file in files { #expect(Self.mode(file) == 0o600, "\(file.path)") }
        // A body being written is the owner's only too.
        let writer = cache.makeWriter(for: Store.entry("http://h/partial"))
        writer.append(ByteBuffer(bytes: Store.bytes(10)))
        writer.waitForFileWork()  // the file is made and written on the writer's queue
        let partial = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("tmp").path)) ?? []
        #expect(partial.count == 1)
        for name in partial { #expect(Self.mode(directory.appendingPathComponent("tmp").appendingPathComponent(name)) == 0o600) }
        writer.abandon()
    }

    /// A folder others can write to (or another user owns) is not used on disk: whoever can write
    /// there can plant entries the cache would serve for any URL, and read or swap what it
    /// writes (a caller naming /tmp or a shared folder, or its entries/ made in advance by
    /// another user). The cache then works in memory only, as when the folder can't be made.
    @Test func aFolderOthersCanWriteToIsNotUsed() throws {
        let parent = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        func opened(_ directory: URL) -> Bool {
            HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 1 << 20, directory: directory).directory != nil
        }
        let mine = parent.appendingPathComponent("mine")
        #expect(opened(mine))
        #expect(opened(mine))  // and again, as left
        let open = parent.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: false)
        #expect(chmod(open.path, 0o777) == 0)
        #expect(!opened(open))
        let othersWritable = parent.appendingPathComponent("others")
        try FileManager.default.createDirectory(at: othersWritable.appendingPathComponent("entries"), withIntermediateDirectories: true)
        #expect(chmod(othersWritable.appendingPathComponent("entries").path, 0o1703) == 0)
        #expect(!opened(othersWritable))
        // Group-writable is the owner's choice (a umask of 002 makes every folder so).
        let groupWritable = parent.appendingPathComponent("group")
        try FileManager.default.createDirectory(at: groupWritable, withIntermediateDirectories: false)
        #expect(chmod(groupWritable.path, 0o2775) == 0)
        #expect(opened(groupWritable))
        // entries/ a link to a folder elsewhere (made in advance).
        let elsewhere = parent.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
        let linked = parent.appendingPathComponent("linked")
        try FileManager.default.createDirectory(at: linked, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(at: linked.appendingPathComponent("bodies"), withDestinationURL: elsewhere)
        #expect(!opened(linked))
        // Owned by another user (needs root to set up).
        if geteuid() == 0 {
            let theirs = parent.appendingPathComponent("theirs")
            try FileManager.default.createDirectory(at: theirs, withIntermediateDirectories: false)
            #expect(chown(theirs.path, 65_534, 65_534) == 0)
            #expect(!opened(theirs))
        }
    }
}

@Suite("HTTP cache storage, a folder with other files")
struct HTTPCacheForeignFilesTests {
    typealias Store = HTTPCacheStoreTests

    @Test func filesTheStoreDidNotWriteSurviveOpening() throws {
        let directory = try Store.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var foreign: [URL] = []
        for (folder, name) in [("tmp", "notes.txt"), ("bodies", "photo.jpg"), ("entries", "readme"), ("entries", "draft.meta")] {
            let url = directory.appendingPathComponent(folder).appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("mine".utf8).write(to: url)
            foreign.append(url)
        }
        do {
            let cache = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
            Store.store(cache, Store.entry("http://h/a"), body: Store.bytes(100))
            cache.removeAll()
            Store.store(cache, Store.entry("http://h/b"), body: Store.bytes(100))
        }
        // The store's own leftovers still go: a metadata file being written, an orphan body.
        let name = DiskCacheStore.entryName(key: "http://h/c", varied: [:])
        let ownLeftovers = [
            directory.appendingPathComponent("tmp").appendingPathComponent("\(name).\(UUID().uuidString).meta"),
            directory.appendingPathComponent("bodies").appendingPathComponent(UUID().uuidString.lowercased()),
        ]
        for url in ownLeftovers { try Data("x".utf8).write(to: url) }
        let reopened = HTTPCache(memoryCapacity: 0, diskCapacity: 10 << 20, directory: directory)
        #expect(Store.body(of: reopened.stored(key: "http://h/b", requestHeaders: [:])) == Store.bytes(100))
        for url in ownLeftovers {
            #expect(!FileManager.default.fileExists(atPath: url.path), "\(url.path) was kept")
        }
        for url in foreign {
            #expect(FileManager.default.fileExists(atPath: url.path), "\(url.path) was removed")
        }
    }
}
