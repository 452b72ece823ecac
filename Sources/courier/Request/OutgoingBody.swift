import Courier
import CompressNIO
import Dispatch
import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

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

    /// Standard input sent as it is read: each read's bytes (up to 64 KiB) are written at once,
    /// so a slow producer's data goes out as it comes. Without `length` it is sent chunked;
    /// with one, stdin must hold exactly that many bytes. The blocking reads run on a Dispatch
    /// thread, not on the cooperative pool.
    static func standardInput(length: Int64?) -> RequestBody {
        .stream(length: length) { writer in
            while let piece = try await readStandardInput() {
                try await writer.write(ByteBuffer(bytes: piece))
            }
        }
    }

    /// The next bytes on stdin, or nil at its end.
    private static func readStandardInput() async throws -> Data? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
            DispatchQueue.global().async {
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                while true {
                    let count = read(STDIN_FILENO, &buffer, buffer.count)
                    if count > 0 {
                        continuation.resume(returning: Data(buffer[0..<count]))
                    } else if count == 0 {
                        continuation.resume(returning: nil)
                    } else if errno == EINTR {
                        continue
                    } else {
                        continuation.resume(
                            throwing: RequestBuildError(description: "cannot read the body from stdin: \(String(cString: strerror(errno)))"))
                    }
                    return
                }
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
