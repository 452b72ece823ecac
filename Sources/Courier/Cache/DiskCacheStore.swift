import CourierEngine
import Crypto
import Foundation
import NIOHTTP1
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The on-disk part of ``HTTPCache``: one small metadata file per entry (the durable index) and
/// one body file per body, in `directory`:
///
/// - `entries/<name>.meta`: the ``CacheEntry`` as JSON; `<name>` is the SHA-256 of the primary
///   and secondary keys, so a new response for the same variant replaces the old one.
/// - `bodies/<bodyID>`: the body bytes, exactly `bodyLength` of them.
/// - `tmp/`: bodies and metadata being written.
///
/// A write streams the body to `tmp/`, renames it into `bodies/`, then writes the metadata to
/// `tmp/` and renames it into `entries/`: that rename is the commit, atomic on POSIX, so a crash
/// leaves either the old entry or the new one, plus at most an orphan file. Opening the store
/// rebuilds the in-memory index from `entries/` and checks it: metadata that doesn't decode,
/// a body file missing or of another length, orphan bodies and anything left in `tmp/` are
/// removed. Least recently used entries are evicted to keep the total (metadata and bodies)
/// within the capacity; use order is kept in memory and starts, on open, from the metadata
/// files' modification times. One lock guards the index and the renames; reading a body
/// happens outside it, through a handle opened under it (a body replaced meanwhile stays
/// readable until closed).
final class DiskCacheStore: Sendable {
    private struct Item {
        var entry: CacheEntry
        var size: Int64
        var lastUse: UInt64
    }

    private struct State {
        /// Entry name to its item.
        var items: [String: Item] = [:]
        /// Primary key to the names of its variants.
        var names: [String: Set<String>] = [:]
        var usage: Int64 = 0
        var clock: UInt64 = 0
    }

    let directory: URL
    let capacity: Int64
    private let entriesDirectory: URL
    private let bodiesDirectory: URL
    private let temporaryDirectory: URL
    private let state = Mutex(State())
    /// Metadata files read (decoded) since the store was opened (tests: opening reads only
    /// what fits in the capacity).
    let metadataFilesRead = Atomic<Int>(0)

    /// Opens (creating it when missing) the store in `directory`; nil when the folders can't be
    /// made, or when one of them is not private: owned by someone else, writable by others, or
    /// (below `directory`) a link.
    init?(directory: URL, capacity: Int) {
        self.directory = directory
        self.capacity = Int64(max(0, capacity))
        entriesDirectory = directory.appendingPathComponent("entries", isDirectory: true)
        bodiesDirectory = directory.appendingPathComponent("bodies", isDirectory: true)
        temporaryDirectory = directory.appendingPathComponent("tmp", isDirectory: true)
        let manager = FileManager.default
        // Private responses and their URLs live here: the folders the store makes are the
        // owner's only (an existing folder keeps the mode its owner gave it).
        do {
            for folder in [directory, entriesDirectory, bodiesDirectory, temporaryDirectory] {
                try manager.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            return nil
        }
        // Whoever else can write here could plant entries served for any URL, or read and swap
        // what the store writes: such a folder is not used (the cache works in memory only).
        guard Self.isPrivateFolder(directory, followingLink: true),
            [entriesDirectory, bodiesDirectory, temporaryDirectory].allSatisfy({ Self.isPrivateFolder($0, followingLink: false) })
        else { return nil }
        rebuildIndex()
    }

    /// Bytes used on disk by committed entries (metadata and bodies).
    var usage: Int { Int(state.withLock { $0.usage }) }

    // MARK: - Open

    private func rebuildIndex() {
        let manager = FileManager.default
        // Only names the store writes are swept: the folder may be one that holds other files.
        for leftover in (try? manager.contentsOfDirectory(atPath: temporaryDirectory.path)) ?? []
        where Self.isValidID(leftover) || Self.isTemporaryMetadataName(leftover) {
            Self.removeFile(temporaryDirectory.appendingPathComponent(leftover))
        }
        // Names and times first (nothing is read): then, newest first, entries are read and
        // checked while they fit in the capacity; the older ones would be evicted at once, so
        // they are removed unread. What is decoded is bounded by the capacity, not by how many
        // files the folder holds.
        var candidates: [(file: String, modified: Date)] = []
        for file in (try? manager.contentsOfDirectory(atPath: entriesDirectory.path)) ?? [] where Self.isMetadataName(file) {
            let path = entriesDirectory.appendingPathComponent(file).path
            let modified = (try? manager.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast
            candidates.append((file, modified))
        }
        candidates.sort { $0.modified > $1.modified }
        var found: [(name: String, entry: CacheEntry, size: Int64)] = []
        var referenced = Set<String>()
        var total: Int64 = 0
        var full = false
        for candidate in candidates {
            let url = entriesDirectory.appendingPathComponent(candidate.file)
            if full {
                Self.removeFile(url)
                continue
            }
            metadataFilesRead.add(1, ordering: .relaxed)
            guard let (entry, metaSize) = Self.decode(url), Self.isValidID(entry.bodyID),
                Self.entryName(key: entry.key, varied: entry.varied) + ".meta" == candidate.file,
                let bodySize = Self.fileSize(bodiesDirectory.appendingPathComponent(entry.bodyID)), bodySize == entry.bodyLength,
                // One the store could never have written (a sparse body near Int64.max on tmpfs
                // would overflow the sums below): dropped, not counted as filling the store.
                bodySize <= capacity - metaSize
            else {
                Self.removeFile(url)
                continue
            }
            let size = metaSize + bodySize
            guard size <= capacity - total else {
                // Least recently used from here on: evicted (its body goes with the orphans).
                full = true
                Self.removeFile(url)
                continue
            }
            total += size
            found.append((String(candidate.file.dropLast(5)), entry, size))
            referenced.insert(entry.bodyID)
        }
        for body in (try? manager.contentsOfDirectory(atPath: bodiesDirectory.path)) ?? []
        where Self.isValidID(body) && !referenced.contains(body) {
            Self.removeFile(bodiesDirectory.appendingPathComponent(body))
        }
        state.withLock { state in
            for item in found.reversed() {  // oldest first: the newest is the most recently used
                state.clock += 1
                state.items[item.name] = Item(entry: item.entry, size: item.size, lastUse: state.clock)
                state.names[item.entry.key, default: []].insert(item.name)
                state.usage += item.size
            }
            evict(&state)
        }
    }

    // MARK: - Reading

    /// The stored variant of `key` matching `requestHeaders` (the most recent response when
    /// several do, RFC 9111 §4.1), with a handle on its body (opened under the lock; the caller
    /// closes it). A variant whose body file is gone or has the wrong length is removed and not
    /// returned.
    func lookup(_ key: String, requestHeaders: HTTPHeaders) -> (CacheEntry, FileHandle)? {
        state.withLock { state -> (CacheEntry, FileHandle)? in
            guard let (name, item) = Self.newestMatch(key, requestHeaders: requestHeaders, in: state) else { return nil }
            guard let handle = Self.openBody(bodiesDirectory.appendingPathComponent(item.entry.bodyID), length: item.entry.bodyLength)
            else {
                removeLocked(name, from: &state)
                return nil
            }
            state.clock += 1
            state.items[name]?.lastUse = state.clock
            return (item.entry, handle)
        }
    }

    /// The entry of the stored variant ``lookup(_:requestHeaders:)`` would choose, from the
    /// index alone (no file is opened), marked as just used: for a hit served from the memory
    /// store, so eviction order follows use and a newer response kept only on disk is seen.
    func newestEntry(_ key: String, requestHeaders: HTTPHeaders) -> CacheEntry? {
        state.withLock { state in
            guard let (name, item) = Self.newestMatch(key, requestHeaders: requestHeaders, in: state) else { return nil }
            state.clock += 1
            state.items[name]?.lastUse = state.clock
            return item.entry
        }
    }

    /// The variant of `key` matching `requestHeaders` with the most recent response (RFC 9111
    /// §4.1), and its name.
    private static func newestMatch(_ key: String, requestHeaders: HTTPHeaders, in state: State) -> (String, Item)? {
        (state.names[key] ?? []).compactMap { name in
            state.items[name].flatMap { CacheVary.matches($0.entry.varied, requestHeaders: requestHeaders) ? (name, $0) : nil }
        }.max { $0.1.entry.responseTime < $1.1.entry.responseTime }
    }

    // MARK: - Writing

    /// A new temporary body file and a handle to write it.
    func makeBodyFile() -> (id: String, handle: FileHandle)? {
        let id = UUID().uuidString.lowercased()
        let url = temporaryDirectory.appendingPathComponent(id)
        guard let handle = Self.createPrivateFile(url) else { return nil }
        return (id, handle)
    }

    /// Removes a temporary body that won't be committed.
    func discardBodyFile(id: String) {
        Self.removeFile(temporaryDirectory.appendingPathComponent(id))
    }

    /// Commits `entry` with the temporary body `entry.bodyID` (already closed): the body moves
    /// into place, then the metadata replaces the variant's old one atomically. False (and
    /// nothing stored) when the entry can't fit or a file operation fails.
    @discardableResult
    func commit(_ entry: CacheEntry) -> Bool {
        let bodyTemporary = temporaryDirectory.appendingPathComponent(entry.bodyID)
        guard Self.isValidID(entry.bodyID), let metadata = Self.encode(entry),
            entry.bodyLength + Int64(metadata.count) <= capacity
        else {
            discardBodyFile(id: entry.bodyID)
            return false
        }
        let name = Self.entryName(key: entry.key, varied: entry.varied)
        let metaTemporary = temporaryDirectory.appendingPathComponent("\(name).\(UUID().uuidString).meta")
        guard Self.writePrivateFile(metadata, to: metaTemporary) else {
            discardBodyFile(id: entry.bodyID)
            return false
        }
        return state.withLock { state -> Bool in
            guard rename(bodyTemporary.path, bodiesDirectory.appendingPathComponent(entry.bodyID).path) == 0 else {
                Self.removeFile(metaTemporary)
                discardBodyFile(id: entry.bodyID)
                return false
            }
            guard rename(metaTemporary.path, entriesDirectory.appendingPathComponent("\(name).meta").path) == 0 else {
                Self.removeFile(metaTemporary)
                Self.removeFile(bodiesDirectory.appendingPathComponent(entry.bodyID))
                return false
            }
            if let old = state.items[name] {
                state.usage -= old.size
                if old.entry.bodyID != entry.bodyID {
                    Self.removeFile(bodiesDirectory.appendingPathComponent(old.entry.bodyID))
                }
            }
            state.clock += 1
            let size = entry.bodyLength + Int64(metadata.count)
            state.items[name] = Item(entry: entry, size: size, lastUse: state.clock)
            state.names[entry.key, default: []].insert(name)
            state.usage += size
            evict(&state)
            return true
        }
    }

    /// Replaces the metadata of a stored variant (after a 304), keeping its body; nothing
    /// happens when that variant (with that body) is no longer stored.
    func update(_ entry: CacheEntry) {
        guard let metadata = Self.encode(entry) else { return }
        let name = Self.entryName(key: entry.key, varied: entry.varied)
        let metaTemporary = temporaryDirectory.appendingPathComponent("\(name).\(UUID().uuidString).meta")
        guard Self.writePrivateFile(metadata, to: metaTemporary) else { return }
        state.withLock { state in
            guard let old = state.items[name], old.entry.bodyID == entry.bodyID,
                rename(metaTemporary.path, entriesDirectory.appendingPathComponent("\(name).meta").path) == 0
            else {
                Self.removeFile(metaTemporary)
                return
            }
            let size = entry.bodyLength + Int64(metadata.count)
            state.usage += size - old.size
            state.clock += 1
            state.items[name] = Item(entry: entry, size: size, lastUse: state.clock)
            evict(&state)
        }
    }

    // MARK: - Removing

    /// Removes every variant of `key`.
    func remove(_ key: String) {
        state.withLock { state in
            for name in state.names[key] ?? [] { removeLocked(name, from: &state) }
        }
    }

    /// Removes every entry.
    func removeAll() {
        state.withLock { state in
            for name in Array(state.items.keys) { removeLocked(name, from: &state) }
        }
    }

    private func removeLocked(_ name: String, from state: inout State) {
        guard let item = state.items.removeValue(forKey: name) else { return }
        state.usage -= item.size
        state.names[item.entry.key]?.remove(name)
        if state.names[item.entry.key]?.isEmpty == true { state.names[item.entry.key] = nil }
        Self.removeFile(entriesDirectory.appendingPathComponent("\(name).meta"))
        Self.removeFile(bodiesDirectory.appendingPathComponent(item.entry.bodyID))
    }

    private func evict(_ state: inout State) {
        guard state.usage > capacity else { return }
        let byAge = state.items.sorted { $0.value.lastUse < $1.value.lastUse }.map(\.key)
        for name in byAge {
            guard state.usage > capacity else { return }
            removeLocked(name, from: &state)
        }
    }

    // MARK: - Files

    /// The file name of a variant: SHA-256 of its primary key and its secondary key, in hex.
    static func entryName(key: String, varied: [String: String?]) -> String {
        var text = key
        for name in varied.keys.sorted() {
            text += "\u{0}\(name)\u{1}" + ((varied[name] ?? nil).map { "=" + $0 } ?? "")
        }
        return SHA256.hash(data: Data(text.utf8)).hex
    }

    /// A body ID is a lowercase UUID: nothing read from a metadata file can name a path elsewhere.
    private static func isValidID(_ id: String) -> Bool {
        id.count == 36 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || $0 == 0x2D }
    }

    /// `<entry name>.meta`: 64 lowercase hex digits (``entryName(key:varied:)``) and `.meta`.
    private static func isMetadataName(_ name: String) -> Bool {
        name.utf8.count == 69 && name.hasSuffix(".meta") && name.utf8.prefix(64).allSatisfy(isLowercaseHex)
    }

    /// `<entry name>.<UUID>.meta`, a metadata file being written in `tmp/`.
    private static func isTemporaryMetadataName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[2] == "meta" && parts[0].utf8.count == 64 && parts[0].utf8.allSatisfy(isLowercaseHex)
            && UUID(uuidString: String(parts[1])) != nil
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }

    private struct Envelope: Codable {
        var version: Int
        var entry: CacheEntry
    }

    /// The metadata format written. Version 1 keyed a response that isn't `public` on
    /// `Authorization` only; version 2 on `Cookie` too (``CacheVary/impliedFieldNames(responseHeaders:)``);
    /// both kept request values in clear in the secondary key but for `Authorization`,
    /// `Proxy-Authorization` and `Cookie`. Version 3 keeps a digest of every value.
    private static let metadataVersion = 3

    private static func encode(_ entry: CacheEntry) -> Data? {
        try? JSONEncoder().encode(Envelope(version: metadataVersion, entry: entry))
    }

    /// Whether an entry read from a metadata file of `version` may be served. A version 1 entry
    /// whose key lacks a field the rule now implies (a non-public response stored before
    /// `Cookie` was in the key) would be served to any cookie: dropped. A version 1 or 2 entry
    /// whose key holds a request value in clear (a `Vary: X-Api-Key` response kept the API
    /// key) is dropped too, and its file removed: it would never match a digested key again,
    /// and the value must not stay on disk. The others (no `Vary`, or varying on credential
    /// fields only, which were digested already) are keyed as version 3 keys them: kept.
    private static func isKeyedByCurrentRule(_ entry: CacheEntry, version: Int) -> Bool {
        switch version {
        case metadataVersion: return true
        case 2: return CacheVary.holdsDigestsOnly(entry.varied)
        case 1:
            return CacheVary.coversImpliedFields(entry.varied, responseHeaders: entry.headers)
                && CacheVary.holdsDigestsOnly(entry.varied)
        default: return false
        }
    }

    /// The entry in a metadata file, or nil when the file is too large, doesn't decode, or
    /// holds what the store never writes: a status a stored response can't have (a negative
    /// one would trap in `HTTPResponseStatus` when the hit is replayed), a negative body length,
    /// or a `Content-Length` other than the body's (the replayed head would announce bytes that
    /// never come); or an entry keyed under an older rule (``isKeyedByCurrentRule(_:version:)``).
    /// With the entry comes the file's size, as the open descriptor saw it.
    private static func decode(_ url: URL) -> (entry: CacheEntry, size: Int64)? {
        guard let (handle, size) = openRegularFile(url), size < 1 << 20, let data = try? handle.read(upToCount: 1 << 20),
            let envelope = try? JSONDecoder().decode(Envelope.self, from: data),
            isKeyedByCurrentRule(envelope.entry, version: envelope.version)
        else { return nil }
        let entry = envelope.entry
        guard (200...599).contains(entry.status), entry.bodyLength >= 0,
            entry.headers["content-length"] == [String(entry.bodyLength)], isSendable(entry)
        else { return nil }
        return (entry, size)
    }

    /// Whether every header name is a token and no header value or the reason phrase holds CR,
    /// LF or NUL: what a server can send and the engine accepts. A stored `ETag` or
    /// `Last-Modified` becomes a later request's conditional field, which the engine would
    /// refuse (every revalidation of the URL failing while the entry stays), and the head is
    /// handed to the caller as received.
    private static func isSendable(_ entry: CacheEntry) -> Bool {
        HeaderValidation.isFieldValue(entry.reason)
            && entry.headerFields.allSatisfy { $0.count == 2 && HeaderValidation.isToken($0[0]) && HeaderValidation.isFieldValue($0[1]) }
    }

    /// A handle on the body file at `url` when it is still a regular file of `length` bytes.
    private static func openBody(_ url: URL, length: Int64) -> FileHandle? {
        guard let (handle, size) = openRegularFile(url), size == length else { return nil }
        return handle
    }

    /// A handle on the file at `url` and its size, when it is a regular file (checked on the
    /// open descriptor). The folder may change while the store is open: a link is not
    /// followed, and a FIFO or device is not waited on (opened non-blocking).
    private static func openRegularFile(_ url: URL) -> (FileHandle, Int64)? {
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return (handle, Int64(status.st_size))
    }

    /// A new file at `url`, mode 0600 (the owner's only), opened for writing; nil when the name
    /// is taken (a link planted there is not followed) or the file can't be made.
    private static func createPrivateFile(_ url: URL) -> FileHandle? {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Writes `data` to a new file at `url` (``createPrivateFile(_:)``); false, with nothing
    /// left behind, when that fails.
    private static func writePrivateFile(_ data: Data, to url: URL) -> Bool {
        guard let handle = createPrivateFile(url) else { return false }
        let written = (try? handle.write(contentsOf: data)) != nil
        let closed = (try? handle.close()) != nil
        if !(written && closed) { removeFile(url) }
        return written && closed
    }

    /// Removes the file or link at `url`, never a directory (the store writes none: one named
    /// like its files is someone else's, and would be emptied with everything in it).
    private static func removeFile(_ url: URL) {
        _ = unlink(url.path)
    }

    /// Whether `url` is a directory owned by this process's user that others may not write to
    /// (its group may: with a umask of 002 a user's own folders are group-writable, for a group
    /// the owner chose). A link is followed only when `followingLink`: the caller's own folder
    /// may be one, the store's folders inside it may not.
    private static func isPrivateFolder(_ url: URL, followingLink: Bool) -> Bool {
        var status = stat()
        guard (followingLink ? stat(url.path, &status) : lstat(url.path, &status)) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFDIR && status.st_uid == geteuid() && status.st_mode & S_IWOTH == 0
    }

    private static func fileSize(_ url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            (attributes[.type] as? FileAttributeType) == .typeRegular,
            let size = attributes[.size] as? NSNumber
        else { return nil }
        return size.int64Value
    }
}
