import CompressNIO
import CourierEngine
import Foundation
import NIOCore

/// `-x/--compress` and `--chunked`: how the request body goes on the wire.
enum OutgoingBody {
    /// `data` deflated in the zlib format (HTTP's `deflate` content coding), or nil when that
    /// is not smaller and `force` (`-xx`) is not given (HTTPie's rule).
    /// - Throws: ``RequestBuildError`` when zlib fails.
    static func deflated(_ data: Data, force: Bool) throws -> Data? {
        var input = ByteBuffer(bytes: data)
        let output: ByteBuffer
        do {
            output = try input.compress(with: .zlib())
        } catch {
            throw RequestBuildError(description: "-x/--compress: the body could not be deflated: \(error)")
        }
        guard force || output.readableBytes < data.count else { return nil }
        return Data(output.readableBytesView)
    }

    /// A body sent with `Transfer-Encoding: chunked`: `data` in pieces of up to 64 KiB.
    static func chunked(_ data: Data) -> RequestBody {
        .stream(length: nil) { writer in
            var offset = 0
            while offset < data.count {
                let end = min(offset + (64 << 10), data.count)
                try await writer.write(ByteBuffer(bytes: data[offset..<end]))
                offset = end
            }
        }
    }

    /// A file sent with `Transfer-Encoding: chunked`, read 64 KiB at a time.
    static func chunked(file: URL) -> RequestBody {
        .stream(length: nil) { writer in
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            while let piece = try handle.read(upToCount: 64 << 10), !piece.isEmpty {
                try await writer.write(ByteBuffer(bytes: piece))
            }
        }
    }
}
