public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import NIOHTTP1
import Synchronization

/// A private HTTP cache (RFC 9111) in memory and, optionally, on disk: URLCache's role for a
/// session. Set it as ``SessionConfiguration/cache``; data, upload and download tasks then store
/// storable GET responses and answer from the cache as `URLRequest.cachePolicy` and the
/// `Cache-Control` fields allow (fresh responses without a request, stale ones revalidated with
/// `If-None-Match` / `If-Modified-Since`, `Vary` honoured, unsafe methods invalidating).
/// A response that isn't `public` (or is `private` too) is kept for the `Authorization` and the
/// `Cookie` it answered (none included; the jar's cookie counts, as sent), by a SHA-256 of their
/// values: one cache may serve several users' requests. Challenges (401, 407) are not stored.
///
/// The memory store keeps small bodies (up to a tenth of `memoryCapacity` each); the disk
/// store keeps one metadata file and one body file per entry under `directory`, written
/// atomically (temporary file, then rename), checked when opened (damaged or half-written
/// entries are removed) and trimmed least-recently-used first to stay within `diskCapacity`.
/// Bodies are written to disk as they arrive and read back in chunks. The folders the cache
/// creates are the owner's only (0700) and so are the files it writes (0600): stored responses
/// may be private ones. A folder that already exists keeps its mode.
///
/// Thread safety: every method may be called from any thread; several sessions may share one
/// cache. Two `HTTPCache` objects on the same directory at once are not supported (each would
/// evict without knowing the other's entries); open the directory again after the first is gone.
public final class HTTPCache: Sendable {
    /// The memory store's limit in bytes.
    public let memoryCapacity: Int
    /// The disk store's limit in bytes (0 when there is no directory).
    public let diskCapacity: Int
    /// The disk store's folder, or nil for a memory-only cache (also nil when the folder could
    /// not be created, or is not private — owned by another user, writable by others, or
    /// holding a link in place of its `entries`, `bodies` or `tmp` folder: the cache then works
    /// in memory only).
    public let directory: URL?

    private let memory: Mutex<MemoryCacheStore>
    let disk: DiskCacheStore?
    /// Finished entries whose files are still being written on their writers' queues.
    let pendingWrites = CachePendingWrites()

    /// A cache keeping up to `memoryCapacity` bytes in memory and `diskCapacity` bytes in
    /// `directory` (created when missing; nil: memory only). Entries already in the directory
    /// are checked and kept. Negative capacities count as 0.
    public init(memoryCapacity: Int, diskCapacity: Int, directory: URL?) {
        self.memoryCapacity = max(0, memoryCapacity)
        self.memory = Mutex(MemoryCacheStore(capacity: memoryCapacity))
        if let directory, diskCapacity > 0, let store = DiskCacheStore(directory: directory, capacity: diskCapacity) {
            self.disk = store
            self.directory = directory
            self.diskCapacity = diskCapacity
        } else {
            self.disk = nil
            self.directory = nil
            self.diskCapacity = 0
        }
    }

    /// Bytes held in memory (bodies plus an estimate of their heads).
    public var currentMemoryUsage: Int {
        pendingWrites.wait(for: nil)
        return memory.withLock { $0.usage }
    }

    /// Bytes used on disk by stored entries (metadata and body files).
    public var currentDiskUsage: Int {
        pendingWrites.wait(for: nil)
        return disk?.usage ?? 0
    }

    /// Removes every stored response, in memory and on disk.
    public func removeAll() {
        pendingWrites.wait(for: nil)
        memory.withLock { $0.removeAll() }
        disk?.removeAll()
    }

    /// Removes the stored responses (every `Vary` variant) for `request`'s URL.
    public func removeCachedResponse(for request: URLRequest) {
        guard let key = CacheKey.key(for: request.url) else { return }
        remove(key: key)
    }

    // MARK: - For the session

    /// A stored response: its entry and its body, in memory or as an open file of `length`
    /// bytes (its size when opened; a replay sends exactly that many).
    enum StoredBody: Sendable {
        case data(Data)
        case file(FileHandle, length: Int64)
    }

    /// The stored variant of `key` for a request with `requestHeaders` (the most recent
    /// response when several match): memory first, unless the disk's index holds a newer match
    /// (a body too large for memory, or evicted from it first); then disk (a small disk body is
    /// read and kept in memory for next time).
    func stored(key: String, requestHeaders: HTTPHeaders) -> (entry: CacheEntry, body: StoredBody)? {
        pendingWrites.wait(for: key)
        if let (entry, body) = memory.withLock({ $0.lookup(key, requestHeaders: requestHeaders) }) {
            let newest = disk?.newestEntry(key, requestHeaders: requestHeaders)
            if newest.map({ $0.responseTime <= entry.responseTime }) ?? true { return (entry, .data(body)) }
        }
        guard let disk, let (entry, handle) = disk.lookup(key, requestHeaders: requestHeaders) else { return nil }
        let limit = memory.withLock { $0.maximumBodySize }
        if entry.bodyLength <= Int64(limit) {
            defer { try? handle.close() }
            guard let body = try? handle.readToEnd() ?? Data(), Int64(body.count) == entry.bodyLength else { return nil }
            memory.withLock { $0.insert(entry, body: body) }
            return (entry, .data(body))
        }
        return (entry, .file(handle, length: entry.bodyLength))
    }

    /// A writer for a response being received with head `entry` (its body ID and length are
    /// filled in by the writer).
    func makeWriter(for entry: CacheEntry) -> CacheEntryWriter {
        CacheEntryWriter(cache: self, entry: Self.withoutCookies(entry), memoryLimit: memory.withLock { $0.maximumBodySize })
    }

    /// `entry` as stored: without `Set-Cookie`, which a hit would otherwise replay (setting again
    /// a cookie that may have changed since), whether it came with the response or a 304.
    private static func withoutCookies(_ entry: CacheEntry) -> CacheEntry {
        guard entry.headerFields.contains(where: { $0.first?.lowercased() == "set-cookie" }) else { return entry }
        var entry = entry
        entry.headerFields.removeAll { $0.first?.lowercased() == "set-cookie" }
        return entry
    }

    /// Stores a finished entry: on disk when its body was written there, in memory when a copy
    /// was kept.
    func store(_ entry: CacheEntry, memoryBody: Data?, diskBodyWritten: Bool) {
        if let memoryBody {
            memory.withLock { $0.insert(entry, body: memoryBody) }
        } else {
            memory.withLock { $0.remove(entry.key, varied: entry.varied) }
        }
        if diskBodyWritten, let disk {
            disk.commit(entry)
        }
    }

    /// Replaces a stored entry's head after a 304 (less any `Set-Cookie` the 304 carried). A
    /// 304 that makes a shared (`public`) entry non-public removes the URL's entries instead: its
    /// key names no user, so refreshed it would be served to every one (the next request
    /// fetches it again, keyed for its own user).
    func refresh(_ entry: CacheEntry) {
        guard CacheVary.coversImpliedFields(entry.varied, responseHeaders: entry.headers) else {
            remove(key: entry.key)
            return
        }
        let entry = Self.withoutCookies(entry)
        pendingWrites.wait(for: entry.key)
        memory.withLock { $0.update(entry) }
        disk?.update(entry)
    }

    /// Removes every variant stored under `key`.
    func remove(key: String) {
        pendingWrites.wait(for: key)
        memory.withLock { $0.remove(key) }
        disk?.remove(key)
    }
}
