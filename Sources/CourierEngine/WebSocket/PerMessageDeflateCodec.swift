import CompressNIO
import NIOCore

/// Compresses Courier's messages and inflates the server's (RFC 7692 §7) with the negotiated
/// parameters. Inflation writes into a buffer that never grows past the message limit plus
/// one byte: a small frame that inflates to gigabytes (a deflate bomb) stops there, as a 1009.
///
/// Not thread-safe: it lives on its connection's event loop.
final class PerMessageDeflateCodec {
    /// Why a message could not be inflated.
    enum InflateError: Error {
        /// It inflates past the limit.
        case tooBig
        /// It is not a raw deflate stream.
        case corrupt
    }

    private let parameters: PerMessageDeflate
    private let deflater: ZlibCompressor?
    private let inflater: ZlibDecompressor
    /// The tail every sync-flushed message ends with, which the sender removes (§7.2.1).
    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    init(parameters: PerMessageDeflate) throws {
        self.parameters = parameters
        // zlib's raw deflate has no 256-byte window (it makes 8 into 9): with a limit of 8,
        // Courier sends uncompressed messages, which RFC 7692 allows (RSV1 is per message).
        if parameters.clientMaxWindowBits >= 9 {
            deflater = try ZlibCompressor(
                algorithm: .deflate,
                configuration: ZlibConfiguration(windowSize: Int32(parameters.clientMaxWindowBits), memoryLevel: 8))
        } else {
            deflater = nil
        }
        // Inflating with the largest window reads streams made with any smaller one.
        inflater = try ZlibDecompressor(algorithm: .deflate, windowSize: 15)
    }

    /// Whether Courier's messages are compressed (see ``init(parameters:)``).
    var compressesOutgoing: Bool { deflater != nil }

    /// `payload` compressed as one message, the sync-flush tail removed; nil when it is
    /// better sent as it is (empty, or no deflater).
    func compress(_ payload: ByteBuffer, allocator: ByteBufferAllocator) throws -> ByteBuffer? {
        guard let deflater, payload.readableBytes > 0 else { return nil }
        var input = payload
        var output = allocator.buffer(capacity: deflater.maxSize(from: input))
        try deflater.deflate(from: &input, to: &output, flush: .sync)
        if output.readableBytes >= 4, output.getBytes(at: output.writerIndex - 4, length: 4) == Self.tail {
            output.moveWriterIndex(to: output.writerIndex - 4)
        }
        if parameters.clientNoContextTakeover { try deflater.reset() }
        return output
    }

    /// A compressed message's payload inflated, at most `limit` bytes.
    func decompress(_ payload: ByteBuffer, limit: Int, allocator: ByteBufferAllocator) throws(InflateError) -> ByteBuffer {
        do {
            return try inflate(payload, limit: limit, allocator: allocator)
        } catch {
            // A message that failed leaves the stream mid-block: the next one starts afresh.
            try? inflater.reset()
            throw error
        }
    }

    private func inflate(_ payload: ByteBuffer, limit: Int, allocator: ByteBufferAllocator) throws(InflateError) -> ByteBuffer {
        var input = payload
        input.writeBytes(Self.tail)
        let step = 16 * 1024
        var output = allocator.buffer(capacity: min(limit + 1, max(step, payload.readableBytes * 4)))
        inflating: while true {
            if output.writableBytes == 0 {
                guard output.readableBytes <= limit else { throw .tooBig }
                output.reserveCapacity(minimumWritableBytes: min(max(step, output.readableBytes), limit + 1 - output.readableBytes))
            }
            do {
                try inflater.inflate(from: &input, to: &output)
                break inflating
            } catch let error as CompressNIOError where error == .bufferOverflow {
                if output.readableBytes > limit { throw .tooBig }
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                break inflating
            } catch {
                throw .corrupt
            }
        }
        if output.readableBytes > limit { throw .tooBig }
        if parameters.serverNoContextTakeover { try? inflater.reset() }
        return output
    }
}
