import CompressNIO
import NIOCore
import Synchronization

/// A content coding a request body can be sent in (RFC 9110 §8.4.1): the value of its
/// `Content-Encoding` field.
public enum ContentCoding: String, Sendable, Hashable, CaseIterable {
    /// `gzip` (RFC 1952).
    case gzip
    /// `deflate`: the zlib format (RFC 1950), as RFC 9110 defines it (not a raw deflate stream).
    case deflate
}

extension RequestBody {
    /// This body compressed with `coding` as it is sent: read a piece at a time (a file 1 MiB
    /// at a time on NIO's thread pool, a stream as its producer writes it), compressed and
    /// written on, so memory stays bounded whatever the body's size. The result is a stream of
    /// unknown length (chunked on HTTP/1.1, DATA frames on HTTP/2): set `Content-Encoding` and
    /// send no `Content-Length`. Like any stream it can be sent once; make it again from the
    /// original body for another attempt.
    /// - Parameters:
    ///   - coding: the `Content-Encoding` to compress with.
    ///   - level: zlib's level, 1 (fastest) to 9 (smallest); other values mean zlib's default (6).
    public func compressed(with coding: ContentCoding, level: Int = 6) -> RequestBody {
        let source = storage
        return .stream(length: nil) { writer in
            let deflater = try BodyDeflater(coding: coding, level: level)
            let sink = BodyWriter { chunk in
                for piece in try deflater.deflate(chunk) { try await writer.write(piece) }
            }
            switch source {
            case .bytes(let buffer):
                var rest = buffer
                while rest.readableBytes > 0, let slice = rest.readSlice(length: min(rest.readableBytes, BodyDeflater.pieceSize)) {
                    try await sink.write(slice)
                }
            case .file(let path, let offset, let length):
                try await Self.streamFile(path: path, offset: offset, length: length, to: sink)
            case .stream(_, let produce):
                try await produce(sink)
            }
            for piece in try deflater.finish() { try await writer.write(piece) }
        }
    }

    /// Writes the file's bytes from `offset` (`length` of them, or to the end) to `sink`.
    private static func streamFile(path: String, offset: Int64, length: Int64?, to sink: BodyWriter) async throws {
        guard offset >= 0, (length ?? 0) >= 0 else { throw EngineError.invalidBody("negative offset or length for \(path)") }
        let reader = try FileChunkReader(path: path)
        let end = length.map { offset + $0 } ?? reader.size
        guard end <= reader.size else { throw EngineError.invalidBody("\(path) is shorter than the body's range") }
        var position = offset
        let allocator = ByteBufferAllocator()
        while position < end {
            let count = Int(min(Int64(FileChunkReader.sliceSize), end - position))
            let chunk = try await reader.read(at: position, count: count, allocator: allocator)
            guard chunk.readableBytes > 0 else { throw EngineError.invalidBody("\(path) ended early") }
            position += Int64(chunk.readableBytes)
            try await sink.write(chunk)
        }
    }
}

/// One zlib stream compressing a body's pieces in order. Its state is behind a mutex: a body
/// writer is `Sendable`, though a well-behaved producer writes one piece at a time.
final class BodyDeflater: Sendable {
    /// The largest piece handed to zlib at once, and the output size that is passed on.
    static let pieceSize = 256 << 10

    private let compressor: Mutex<ZlibCompressor>

    init(coding: ContentCoding, level: Int) throws {
        var configuration = ZlibConfiguration()
        if (1...9).contains(level) { configuration.compressionLevel = Int32(level) }
        let algorithm: ZlibAlgorithm = coding == .gzip ? .gzip : .zlib
        let made = try ZlibCompressor(algorithm: algorithm, configuration: configuration)
        compressor = Mutex(made)
    }

    /// The compressed output `input` produced so far (often none: zlib keeps a window).
    func deflate(_ input: ByteBuffer) throws -> [ByteBuffer] {
        var input = input
        return try compressor.withLock { compressor in
            var pieces: [ByteBuffer] = []
            // Sized for the input (a producer may write small pieces): zlib mostly holds output
            // back, and a full buffer only means another one.
            let capacity = min(Self.pieceSize, max(4096, compressor.maxSize(from: input)))
            var output = ByteBufferAllocator().buffer(capacity: capacity)
            while input.readableBytes > 0 {
                if output.writableBytes < 64 {
                    pieces.append(output)
                    output = ByteBufferAllocator().buffer(capacity: capacity)
                }
                do {
                    try compressor.deflate(from: &input, to: &output, flush: .no)
                } catch let error as CompressNIOError where error == .bufferOverflow {
                    // No room was left: pass on what there is and go on in a new buffer.
                    if output.readableBytes > 0 { pieces.append(output) }
                    output = ByteBufferAllocator().buffer(capacity: capacity)
                }
            }
            if output.readableBytes > 0 { pieces.append(output) }
            return pieces
        }
    }

    /// The rest of the stream (what zlib held back, and the trailer).
    func finish() throws -> [ByteBuffer] {
        try compressor.withLock { compressor in
            var pieces: [ByteBuffer] = []
            // A buffer with capacity: zlib's wrapper takes the input's address even when empty.
            var empty = ByteBufferAllocator().buffer(capacity: 16)
            while true {
                var output = ByteBufferAllocator().buffer(capacity: Self.pieceSize)
                do {
                    try compressor.deflate(from: &empty, to: &output, flush: .finish)
                    if output.readableBytes > 0 { pieces.append(output) }
                    return pieces
                } catch let error as CompressNIOError where error == .bufferOverflow {
                    pieces.append(output)  // full: more follows
                }
            }
        }
    }
}
