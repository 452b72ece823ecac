import NIOCore
import Testing

@testable import CourierEngine

/// ``HTTP2FrameBoundaries`` with plain bytes: where a connection's reads are cut so that the
/// frame decoder gets whole frames.
@Suite("HTTP/2 frame boundaries")
struct EngineHTTP2FrameBoundariesTests {
    /// A frame of `payload` bytes (type DATA, stream 1; only the length matters here).
    static func frame(_ payload: Int, fill: UInt8 = 0x61) -> [UInt8] {
        [UInt8(payload >> 16 & 0xFF), UInt8(payload >> 8 & 0xFF), UInt8(payload & 0xFF), 0, 0, 0, 0, 0, 1]
            + [UInt8](repeating: fill, count: payload)
    }

    /// Feeds `bytes` in reads of the given sizes; returns each read's slice lengths.
    static func cut(_ bytes: [UInt8], reads: [Int], target: Int) -> [[Int]] {
        var boundaries = HTTP2FrameBoundaries()
        var offset = 0
        var result: [[Int]] = []
        for size in reads {
            let read = ByteBuffer(bytes: bytes[offset..<offset + size])
            result.append(boundaries.sliceLengths(of: read, target: target))
            offset += size
        }
        return result
    }

    @Test func smallFramesInOneReadStayOneSlice() {
        let bytes = Self.frame(6) + Self.frame(0) + Self.frame(100)
        #expect(Self.cut(bytes, reads: [bytes.count], target: 16_384) == [[bytes.count]])
    }

    @Test func fullFramesInOneReadAreCutAtEachFrameEnd() {
        let one = Self.frame(16_384).count  // 16,393
        let bytes = Self.frame(16_384) + Self.frame(16_384) + Self.frame(16_384)
        #expect(Self.cut(bytes, reads: [bytes.count], target: 16_384) == [[one, one, one]])
    }

    @Test func smallFramesAreGroupedUpToTheTarget() {
        // Five frames of 4,009 bytes: 16,036 fit under 16,384 with four, the fifth starts a new slice.
        let bytes = (0..<5).flatMap { _ in Self.frame(4_000) }
        #expect(Self.cut(bytes, reads: [bytes.count], target: 16_384) == [[4 * 4_009, 4_009]])
    }

    @Test func aFrameThatContinuesInTheNextReadIsASliceOfItsOwn() {
        let bytes = Self.frame(100) + Self.frame(16_384) + Self.frame(50)
        // The first read ends 1,000 bytes into the big frame.
        let first = 109 + 1_000
        let result = Self.cut(bytes, reads: [first, bytes.count - first], target: 16_384)
        #expect(result == [[109, 1_000], [16_393 - 1_000 + 59]])
    }

    @Test func aHeaderSplitAcrossReadsIsStillFound() {
        let bytes = Self.frame(16_384) + Self.frame(16_384)
        // Reads of 16,397 (a frame and 4 header bytes), 5 (the rest of the header), and the rest.
        let result = Self.cut(bytes, reads: [16_397, 5, bytes.count - 16_402], target: 16_384)
        #expect(result == [[16_393, 4], [5], [16_384]])
        // The byte after them starts a frame: a 0-length frame is found whole.
        var boundaries = HTTP2FrameBoundaries()
        for read in [ByteBuffer(bytes: bytes[0..<16_397]), ByteBuffer(bytes: bytes[16_397...])] {
            _ = boundaries.sliceLengths(of: read, target: 16_384)
        }
        let next = Self.frame(0) + Self.frame(20_000)
        #expect(boundaries.sliceLengths(of: ByteBuffer(bytes: next), target: 16_384) == [9, 20_009])
    }

    @Test func slicesAlwaysAddUpToTheRead() {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<200 {
            bytes += Self.frame(Int.random(in: 0...16_384, using: &generator))
        }
        var reads: [Int] = []
        var left = bytes.count
        while left > 0 {
            let size = min(left, Int.random(in: 1...70_000, using: &generator))
            reads.append(size)
            left -= size
        }
        let result = Self.cut(bytes, reads: reads, target: 16_384)
        for (lengths, read) in zip(result, reads) {
            #expect(lengths.reduce(0, +) == read)
            #expect(lengths.allSatisfy { $0 > 0 && $0 <= 16_393 })
        }
    }

    @Test func bytesThatAreNotFramesAreOnlyCut() {
        // A broken peer: a header announcing 16 MiB. Nothing is dropped; the read is one slice.
        let bytes: [UInt8] = [0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 7, count: 1_000)
        #expect(Self.cut(bytes, reads: [bytes.count], target: 16_384) == [[bytes.count]])
    }

    @Test func aMaximalLengthHeaderSplitOneBytePerReadIsCountedNotBuffered() {
        // A header announcing 2^24-1 bytes, a byte per read, then 64 KiB reads of its payload:
        // each read is one slice of its own size (nothing held back, nothing allocated for the
        // announced length), and the frame after it is found where the length says.
        var boundaries = HTTP2FrameBoundaries()
        for byte: UInt8 in [0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 1] {
            #expect(boundaries.sliceLengths(of: ByteBuffer(bytes: [byte]), target: 16_384) == [1])
        }
        let chunk = ByteBuffer(repeating: 7, count: 65_536)
        var left = (1 << 24) - 1
        while left >= 65_536 {
            #expect(boundaries.sliceLengths(of: chunk, target: 16_384) == [65_536])
            left -= 65_536
        }
        let tail = ByteBuffer(bytes: [UInt8](repeating: 7, count: left) + Self.frame(10))
        #expect(boundaries.sliceLengths(of: tail, target: 16_384) == [left, 19])
    }
}
