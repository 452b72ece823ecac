import CourierEngine
import Foundation
import NIOCore

/// How a multipart form reads its file parts: their size when appended, their bytes when the
/// body is produced.
///
/// Every open goes through ``open(_:)`` (``RegularFile``: only of a path that names a regular
/// file, without blocking, checked again through the descriptor). A path is only a name:
/// between `appendPart` and the send (or between two sends of the same form) it can come to
/// name a FIFO, a device or a directory. Opened plainly, a
/// FIFO holds the opening thread until some writer comes, and that writer chooses the bytes
/// sent. So the file read is the one checked, and anything but a regular file is refused with
/// ``CourierError/RequestSerializationReason/notARegularFile(path:)``.
enum MultipartFileReader {
    /// The size of the regular, readable file at `path` (a symbolic link is followed).
    /// - Throws: ``CourierError/RequestSerializationReason/fileNotFound(path:)``,
    ///   ``CourierError/RequestSerializationReason/notARegularFile(path:)`` or
    ///   ``CourierError/RequestSerializationReason/fileNotReadable(path:)``.
    static func size(atPath path: String) throws -> Int64 {
        let (handle, size) = try open(path)
        try? handle.close()
        return size
    }

    /// `path` opened for reading (``RegularFile/open(_:)``), and the file's size, if it names a
    /// regular file now.
    static func open(_ path: String) throws -> (FileHandle, size: Int64) {
        do {
            let opened = try RegularFile.open(path)
            return (FileHandle(fileDescriptor: opened.descriptor, closeOnDealloc: true), opened.size)
        } catch {
            switch error {
            case .nulInPath:
                throw CourierError.requestSerializationFailed(.fileNotFound(path: path))
            case .notRegular:
                throw CourierError.requestSerializationFailed(.notARegularFile(path: path))
            case .unavailable(let code):
                switch code {
                case ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG: throw CourierError.requestSerializationFailed(.fileNotFound(path: path))
                // A directory opens read-only on Linux; EISDIR comes from other systems.
                case EISDIR: throw CourierError.requestSerializationFailed(.notARegularFile(path: path))
                default: throw CourierError.requestSerializationFailed(.fileNotReadable(path: path))
                }
            }
        }
    }

    /// Reads `length` bytes of the file at `path` in chunks of at most `chunkSize`, each read by
    /// ``MultipartChunk/read(from:count:)`` on NIO's thread pool; a file that shrank fails.
    static func read<Chunk: MultipartChunk>(
        atPath path: String, length: Int64, chunkSize: Int, into sink: (Chunk) async throws -> Void
    ) async throws {
        let (handle, _) = try open(path)
        defer { try? handle.close() }
        var remaining = length
        while remaining > 0 {
            let count = Int(min(Int64(chunkSize), remaining))
            let chunk: Chunk
            do {
                // On NIO's thread pool: a disk read never holds a thread of the cooperative pool.
                chunk = try await BlockingRead.onThreadPool { try Chunk.read(from: handle, count: count) }
            } catch {
                throw CourierError.requestSerializationFailed(.bodyStreamFailed("reading \(path): \(error)"))
            }
            guard chunk.byteCount > 0 else {
                throw CourierError.requestSerializationFailed(.bodyStreamFailed("\(path) ended \(remaining) bytes early"))
            }
            remaining -= Int64(chunk.byteCount)
            try await sink(chunk)
        }
    }

    /// Up to `count` bytes from `descriptor` (fewer only at its end), read by read(2) straight
    /// into a new buffer.
    static func readBuffer(_ descriptor: Int32, count: Int) throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        while buffer.readableBytes < count {
            var failure: Int32 = 0
            let wanted = count - buffer.readableBytes
            let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { pointer in
                let asked = min(pointer.count, wanted)
                let result = Foundation.read(descriptor, pointer.baseAddress, asked)
                if result < 0 { failure = errno }
                return max(0, result)
            }
            if failure == EINTR { continue }
            if failure != 0 { throw CourierError.requestSerializationFailed(.bodyStreamFailed(String(cString: strerror(failure)))) }
            if read == 0 { break }
        }
        return buffer
    }
}
