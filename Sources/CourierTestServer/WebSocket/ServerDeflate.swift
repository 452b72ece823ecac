import CompressNIO
import NIOCore

/// The server's permessage-deflate (RFC 7692) with the parameters it answered: compresses
/// with `server_max_window_bits`, resets per message for the no-context-takeover parameters.
final class ServerDeflate {
    private let deflater: ZlibCompressor
    private let inflater: ZlibDecompressor
    private let resetsDeflater: Bool
    private let resetsInflater: Bool

    init(parameters: [String]) throws {
        func bits(_ name: String) -> Int32? {
            parameters.first { $0.hasPrefix(name + "=") }.flatMap { Int32($0.dropFirst(name.count + 1)) }
        }
        let window = max(9, bits("server_max_window_bits") ?? 15)
        deflater = try ZlibCompressor(algorithm: .deflate, configuration: ZlibConfiguration(windowSize: window, memoryLevel: 8))
        inflater = try ZlibDecompressor(algorithm: .deflate, windowSize: 15)
        resetsDeflater = parameters.contains("server_no_context_takeover")
        resetsInflater = parameters.contains("client_no_context_takeover")
    }

    func compress(_ payload: ByteBuffer, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        var input = payload
        var output = allocator.buffer(capacity: deflater.maxSize(from: input))
        try deflater.deflate(from: &input, to: &output, flush: .sync)
        if output.readableBytes >= 4, output.getBytes(at: output.writerIndex - 4, length: 4) == [0, 0, 0xFF, 0xFF] {
            output.moveWriterIndex(to: output.writerIndex - 4)
        }
        if resetsDeflater { try deflater.reset() }
        return output
    }

    func decompress(_ payload: ByteBuffer, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        var input = payload
        input.writeBytes([0, 0, 0xFF, 0xFF])
        var output = allocator.buffer(capacity: max(1024, payload.readableBytes * 8))
        while true {
            if output.writableBytes == 0 { output.reserveCapacity(minimumWritableBytes: output.capacity) }
            do {
                try inflater.inflate(from: &input, to: &output)
                break
            } catch let error as CompressNIOError where error == .bufferOverflow {
                continue
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                break
            }
        }
        if resetsInflater { try inflater.reset() }
        return output
    }
}
