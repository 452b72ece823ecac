import Foundation
import NIOCore
import Synchronization

/// Takes a response body as it arrives and stores it with its head when it ends: the bytes go
/// straight to a temporary file of the disk store (never gathered a second time in memory),
/// and a copy is kept in memory only while the body is small enough for the memory store. A
/// body larger than the disk capacity stops being written. Calls come in order from one task.
final class CacheEntryWriter: Sendable {
    private struct State {
        var entry: CacheEntry
        var memoryBody: Data?
        var file: (id: String, handle: FileHandle)?
        var written: Int64 = 0
        var done = false
    }

    private let cache: HTTPCache
    private let memoryLimit: Int
    private let state: Mutex<State>

    init(cache: HTTPCache, entry: CacheEntry, memoryLimit: Int) {
        self.cache = cache
        self.memoryLimit = memoryLimit
        var state = State(entry: entry, memoryBody: memoryLimit > 0 ? Data() : nil)
        state.file = cache.disk?.makeBodyFile()
        self.state = Mutex(state)
    }

    /// Appends a body chunk.
    func append(_ buffer: ByteBuffer) {
        state.withLock { state in
            guard !state.done else { return }
            let count = buffer.readableBytes
            state.written += Int64(count)
            if state.memoryBody != nil {
                if (state.memoryBody?.count ?? 0) + count <= memoryLimit {
                    buffer.withUnsafeReadableBytes { state.memoryBody?.append(contentsOf: $0) }
                } else {
                    state.memoryBody = nil
                }
            }
            if let file = state.file {
                let fits = state.written <= Int64(cache.diskCapacity)
                let wrote = fits && (try? buffer.withUnsafeReadableBytes { try file.handle.write(contentsOf: $0) }) != nil
                if !wrote {
                    try? file.handle.close()
                    cache.disk?.discardBodyFile(id: file.id)
                    state.file = nil
                }
            }
        }
    }

    /// The body ended: stores the entry, its `Content-Length` set to the stored length (the body
    /// is kept as delivered, after decompression).
    func finish() {
        let result: (CacheEntry, Data?, Bool)? = state.withLock { state in
            guard !state.done else { return nil }
            state.done = true
            var entry = state.entry
            entry.bodyLength = state.written
            var headers = entry.headers
            headers.remove(name: "transfer-encoding")
            headers.replaceOrAdd(name: "Content-Length", value: String(state.written))
            entry.headers = headers
            var onDisk = false
            if let file = state.file {
                onDisk = (try? file.handle.close()) != nil
                entry.bodyID = file.id
                if !onDisk { cache.disk?.discardBodyFile(id: file.id) }
            }
            return (entry, state.memoryBody, onDisk)
        }
        guard let (entry, memoryBody, onDisk) = result, memoryBody != nil || onDisk else { return }
        cache.store(entry, memoryBody: memoryBody, diskBodyWritten: onDisk)
    }

    /// The body will not complete (failure, cancellation): nothing is stored.
    func abandon() {
        state.withLock { state in
            guard !state.done else { return }
            state.done = true
            if let file = state.file {
                try? file.handle.close()
                cache.disk?.discardBodyFile(id: file.id)
            }
        }
    }
}
