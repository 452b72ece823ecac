import Dispatch
import Foundation
import NIOCore
import Synchronization

/// Takes a response body as it arrives and stores it with its head when it ends: the bytes go
/// straight to a temporary file of the disk store (never gathered a second time in memory),
/// and a copy is kept in memory only while the body is small enough for the memory store. A
/// body larger than the disk capacity stops being written. Calls come in order from one task,
/// on the engine's event loop: the files are created, written, closed and committed on the
/// writer's own serial queue, never there. A finished entry is registered with the cache's
/// ``CachePendingWrites`` until its commit has run, so a lookup after the store still sees it.
final class CacheEntryWriter: Sendable {
    /// What the event loop's calls track.
    private struct State {
        var entry: CacheEntry
        var memoryBody: Data?
        /// Whether the body is still going to disk (a disk store exists, and neither the
        /// capacity nor a write failure stopped it).
        var toDisk: Bool
        var written: Int64 = 0
        var done = false
    }

    /// The body file, touched only on `queue`.
    private struct BodyFile {
        var id: String
        var handle: FileHandle
    }

    private let cache: HTTPCache
    private let memoryLimit: Int
    private let state: Mutex<State>
    /// This entry's file I/O, in order (internal so that tests can hold it up).
    let queue = DispatchQueue(label: "courier.cache-entry-writer")
    /// Only used on `queue` (a lock that is never contended, for Sendable's sake).
    private let file = Mutex<BodyFile?>(nil)

    init(cache: HTTPCache, entry: CacheEntry, memoryLimit: Int) {
        self.cache = cache
        self.memoryLimit = memoryLimit
        self.state = Mutex(State(entry: entry, memoryBody: memoryLimit > 0 ? Data() : nil, toDisk: cache.disk != nil))
        guard let disk = cache.disk else { return }
        queue.async { [self] in
            file.withLock { $0 = disk.makeBodyFile().map { BodyFile(id: $0.id, handle: $0.handle) } }
        }
    }

    /// Appends a body chunk: kept in memory at once (while small enough), queued for the file.
    func append(_ buffer: ByteBuffer) {
        let (toDisk, tooLarge) = state.withLock { state -> (Bool, Bool) in
            guard !state.done else { return (false, false) }
            let count = buffer.readableBytes
            state.written += Int64(count)
            if state.memoryBody != nil {
                if (state.memoryBody?.count ?? 0) + count <= memoryLimit {
                    buffer.withUnsafeReadableBytes { state.memoryBody?.append(contentsOf: $0) }
                } else {
                    state.memoryBody = nil
                }
            }
            guard state.toDisk else { return (false, false) }
            if state.written > Int64(cache.diskCapacity) {
                state.toDisk = false
                return (false, true)
            }
            return (true, false)
        }
        if toDisk {
            queue.async { [self] in
                file.withLock { file in
                    guard let body = file else { return }
                    do {
                        try buffer.withUnsafeReadableBytes { try body.handle.write(contentsOf: $0) }
                    } catch {
                        discard(&file)
                    }
                }
            }
        } else if tooLarge {
            queue.async { [self] in file.withLock { discard(&$0) } }
        }
    }

    /// Closes and removes the body file (on `queue`); nothing of it will be stored.
    private func discard(_ file: inout BodyFile?) {
        guard let body = file else { return }
        try? body.handle.close()
        cache.disk?.discardBodyFile(id: body.id)
        file = nil
    }

    /// The body ended: stores the entry, its `Content-Length` set to the stored length (the body
    /// is kept as delivered, after decompression). With a disk store, the file is closed and
    /// committed on the writer's queue, and the memory copy stored with it there.
    /// - Parameter whenStored: called once the entry is stored (or found not storable): at
    ///   once when there is nothing to write, else on the writer's queue after the commit.
    func finish(whenStored: (@Sendable () -> Void)? = nil) {
        let result: (CacheEntry, Data?, Bool)? = state.withLock { state in
            guard !state.done else { return nil }
            state.done = true
            var entry = state.entry
            entry.bodyLength = state.written
            var headers = entry.headers
            headers.remove(name: "transfer-encoding")
            headers.replaceOrAdd(name: "Content-Length", value: String(state.written))
            entry.headers = headers
            return (entry, state.memoryBody, state.toDisk)
        }
        guard let (finished, memoryBody, toDisk) = result else {
            whenStored?()
            return
        }
        guard toDisk else {
            // Nothing left to write: stored now, from memory only. A file this writer began (a
            // body that outgrew the disk capacity) is removed on the queue first, so `whenStored`
            // runs after it.
            if memoryBody != nil { cache.store(finished, memoryBody: memoryBody, diskBodyWritten: false) }
            if let whenStored, cache.disk != nil {
                queue.async { whenStored() }
            } else {
                whenStored?()
            }
            return
        }
        let pending = cache.pendingWrites
        let ticket = pending.begin(key: finished.key, on: queue)
        queue.async { [self] in
            var entry = finished
            let onDisk = file.withLock { file -> Bool in
                guard let body = file else { return false }
                file = nil
                entry.bodyID = body.id
                guard (try? body.handle.close()) != nil else {
                    cache.disk?.discardBodyFile(id: body.id)
                    return false
                }
                return true
            }
            if memoryBody != nil || onDisk { cache.store(entry, memoryBody: memoryBody, diskBodyWritten: onDisk) }
            pending.end(key: finished.key, ticket: ticket)
            whenStored?()
        }
    }

    /// Waits until the file work queued so far (creating, writing, committing) has run. Never
    /// called on the event loop: for readers of the files themselves, such as tests.
    func waitForFileWork() {
        queue.sync {}
    }

    /// The body will not complete (failure, cancellation): nothing is stored.
    func abandon() {
        let wasWriting = state.withLock { state -> Bool in
            guard !state.done else { return false }
            state.done = true
            return state.toDisk
        }
        if wasWriting { queue.async { [self] in file.withLock { discard(&$0) } } }
    }
}
