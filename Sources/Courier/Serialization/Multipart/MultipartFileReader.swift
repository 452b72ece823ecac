import CourierEngine
import Foundation
import NIOCore

/// How a multipart form reads its file parts: which file and its size when appended, its
/// bytes when the body is produced.
///
/// Every open goes through ``RegularFile/open(_:)`` (only of a path that names a regular file,
/// without blocking, checked again through the descriptor). A path is only a name: between
/// `appendPart` and the send (or between two sends of the same form) it can come to name a
/// FIFO, a device, a directory or another file. Opened plainly, a FIFO holds the opening
/// thread until some writer comes, and that writer chooses the bytes sent. So the file read is
/// the one checked: anything but a regular file is refused with
/// ``CourierError/RequestSerializationReason/notARegularFile(path:)``, and another file than
/// the one appended (``open(_:appended:)``) with
/// ``CourierError/RequestSerializationReason/bodyStreamFailed(_:)``.
enum MultipartFileReader {
    /// Which regular, readable file `path` names now, and its size (a symbolic link is followed).
    /// - Throws: ``CourierError/RequestSerializationReason/fileNotFound(path:)``,
    ///   ``CourierError/RequestSerializationReason/notARegularFile(path:)`` or
    ///   ``CourierError/RequestSerializationReason/fileNotReadable(path:)``.
    static func identity(atPath path: String) throws -> RegularFile.Identity {
        let opened = try openChecked(path)
        close(opened.descriptor)
        return opened.identity
    }

    /// `path` opened for reading (``RegularFile/open(_:)``) if it names a regular file now, and
    /// the same file as `appended` (what ``identity(atPath:)`` said when the part was appended).
    /// - Throws: as ``identity(atPath:)``, or ``CourierError/RequestSerializationReason/bodyStreamFailed(_:)``
    ///   when the path names another file by now.
    static func open(_ path: String, appended: RegularFile.Identity) throws -> FileHandle {
        let opened = try openChecked(path)
        let handle = FileHandle(fileDescriptor: opened.descriptor, closeOnDealloc: true)
        guard opened.identity.isSameFile(as: appended) else {
            try? handle.close()
            throw CourierError.requestSerializationFailed(
                .bodyStreamFailed("\(path) names another file than the one appended (it was replaced after appendPart)"))
        }
        return handle
    }

    /// ``RegularFile/open(_:)`` with its refusals as the form's typed errors.
    private static func openChecked(_ path: String) throws -> RegularFile.Opened {
        do {
            return try RegularFile.open(path)
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

    /// Reads `length` bytes of the file at `path` (``open(_:appended:)``) in chunks of at most `chunkSize`, each read by
    /// ``MultipartChunk/read(from:count:)`` on NIO's thread pool; a file that shrank fails.
    static func read<Chunk: MultipartChunk>(
        atPath path: String, appended: RegularFile.Identity, length: Int64, chunkSize: Int,
        into sink: (Chunk) async throws -> Void
    ) async throws {
        let handle = try open(path, appended: appended)
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
