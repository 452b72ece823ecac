import Foundation
import NIOCore
import Testing

@testable import Courier

/// The download file writer on its own: bytes in order whatever the chunking, a resumed file
/// written on from its offset, and a failed write reported, never a short file passed as whole.
@Suite("Download sink")
struct DownloadSinkTests {
    /// `count` bytes of a pattern that shows any reordering, dropped or doubled chunk.
    private static func pattern(_ count: Int, from start: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 + start) &* 31 &+ ($0 + start) >> 8) }
    }

    @Test("chunks of every size, empty ones included, land in order and are counted")
    func chunksLandInOrder() throws {
        let sink = try DownloadSink()
        var expected: [UInt8] = []
        // 3,000 chunks, with empty ones and sizes from 1 byte to 20 KiB.
        for index in 0..<3_000 {
            let size = index % 7 == 0 ? 0 : (index * 7_919) % 20_480 + 1
            let bytes = Self.pattern(size, from: expected.count)
            expected += bytes
            sink.write(ByteBuffer(bytes: bytes))
        }
        let url = try #require(sink.close())
        defer { try? FileManager.default.removeItem(at: url) }
        let written = try Data(contentsOf: url)
        #expect(written.count == expected.count)
        #expect(written == Data(expected))
        #expect(sink.bytesWritten == Int64(expected.count))
    }

    @Test("a resumed file keeps its first bytes and is written on from the offset")
    func aResumedFileIsWrittenFromItsOffset() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("CourierSinkTest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("0123456789-stale-tail".utf8).write(to: url)
        let sink = try DownloadSink(fileURL: url, offset: 10, isCallersFile: true)
        sink.write(ByteBuffer(string: "abc"))
        sink.write(ByteBuffer(string: "def"))
        #expect(sink.close() == url)
        #expect(try String(contentsOf: url, encoding: .utf8) == "0123456789abcdef")
        #expect(sink.bytesWritten == 6)
    }

    @Test(
        "a partial file is cut only after the offset: started over it loses its old bytes, as long as the offset it keeps them",
        arguments: zip([Int64(0), 10], ["abc", "0123456789abc"]))
    func aPartialFileIsCutAfterTheOffset(offset: Int64, expected: String) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("CourierSinkTest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("0123456789".utf8).write(to: url)
        let sink = try DownloadSink(fileURL: url, offset: offset, isCallersFile: true)
        sink.write(ByteBuffer(string: "abc"))
        #expect(sink.close() == url)
        #expect(try String(contentsOf: url, encoding: .utf8) == expected)
    }

    @Test("an offset from hostile resume data (negative, past the file's end) is refused and the file is left as it was",
          arguments: [Int64(-1), Int64.min, 11, Int64.max])
    func anOffsetOutsideTheFileIsRefused(offset: Int64) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("CourierSinkTest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("0123456789".utf8).write(to: url)
        #expect {
            _ = try DownloadSink(fileURL: url, offset: offset, isCallersFile: true)
        } throws: { error in
            guard case .cannotWriteDownloadFile(let path, _)? = error as? CourierError else { return false }
            return path == url.path
        }
        #expect(try String(contentsOf: url, encoding: .utf8) == "0123456789")
    }
}
