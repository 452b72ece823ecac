#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// Reads a file in chunks with `pread` on NIO's thread pool: a request body streamed from disk
/// without loading it whole and without blocking an event loop.
final class FileChunkReader: Sendable {
    /// The bytes read per `pread` when a file body is sent: large enough that the thread-pool
    /// hop and the batch it feeds are paid once per MiB, small enough to bound memory.
    static let sliceSize = 1 << 20

    /// Which file a path named when it was opened, and its size then (``RegularFile/Identity``).
    typealias Identity = RegularFile.Identity

    let path: String
    private let descriptor: Int32
    /// The file opened.
    let identity: Identity
    /// The file's size when it was opened.
    var size: Int64 { identity.size }

    /// Opens `path` (``RegularFile/open(_:)``): the descriptor is what the body is read from,
    /// and what was checked; anything but a regular file is refused without being opened.
    init(path: String) throws(EngineError) {
        let opened: RegularFile.Opened
        do {
            opened = try RegularFile.open(path)
        } catch {
            switch error {
            case .nulInPath: throw .invalidBody("the file path \(path.debugDescription) contains a NUL byte")
            case .notRegular: throw .invalidBody("\(path) is not a regular file")
            case .unavailable(let code): throw .invalidBody("cannot read file \(path): \(String(cString: strerror(code)))")
            }
        }
        self.path = path
        self.descriptor = opened.descriptor
        self.identity = opened.identity
    }

    /// Opens `path` to send the file checked as `expected` when its request was made; a path
    /// that names another file by now (replaced, or a FIFO put there: not a regular file), or
    /// the same file changed since, is refused.
    convenience init(path: String, expecting expected: Identity) throws(EngineError) {
        try self.init(path: path)
        guard identity == expected else {
            throw .invalidBody("\(path) was replaced or changed after the request was made")
        }
    }

    deinit {
        close(descriptor)
    }

    /// Reads up to `count` bytes at `offset`; an empty buffer means end of file.
    func read(at offset: Int64, count: Int, allocator: ByteBufferAllocator) async throws -> ByteBuffer {
        let fd = descriptor
        let path = self.path
        return try await NIOThreadPool.singleton.runIfActive {
            var buffer = allocator.buffer(capacity: count)
            let readCount = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                let result = pread(fd, pointer.baseAddress, count, off_t(offset))
                guard result >= 0 else {
                    throw EngineError.invalidBody("reading \(path) failed: \(String(cString: strerror(errno)))")
                }
                return result
            }
            _ = readCount
            return buffer
        }
    }
}
