import CourierEngine
import Dispatch
import Foundation
import NIOCore

/// Sends a Foundation `InputStream` (a request's `httpBodyStream`) as an engine body, read in
/// 64 KiB chunks on a serial queue of the stream's own, so memory stays bounded and a stream
/// that blocks (a pipe whose writer is late) holds neither an event loop nor a thread of
/// Swift's cooperative pool. A throttled multipart stream
/// (``MultipartFormData/throttleBandwidth(packetSize:delay:)``) pauses after each packet with
/// `Task.sleep`, holding no thread at all.
enum InputStreamBody {
    static let chunkSize = 64 * 1024

    static func make(_ stream: InputStream, length: Int64?) -> RequestBody {
        let reader = Reader(stream)
        return .stream(length: length) { writer in
            do {
                while let next = try await reader.next() {
                    // AFN's stream sleeps before handing the packet over: the same here.
                    if next.delay > 0 { try await Task.sleep(nanoseconds: BlockingRead.nanoseconds(next.delay)) }
                    try await writer.write(next.chunk)
                }
            } catch {
                reader.close()
                throw error
            }
            reader.close()
        }
    }

    /// Reads the stream on its own serial queue. `@unchecked Sendable`: the stream is touched
    /// only on `queue`, one read at a time.
    private final class Reader: @unchecked Sendable {
        private let stream: InputStream
        private let queue = DispatchQueue(label: "courier.input-stream-body")
        private var opened = false

        init(_ stream: InputStream) { self.stream = stream }

        /// The next chunk and the pause to make before sending it; nil at the end.
        func next() async throws -> (chunk: ByteBuffer, delay: TimeInterval)? {
            try await BlockingRead.on(queue) { [self] in
                if !opened {
                    opened = true
                    stream.open()
                }
                var buffer = ByteBuffer()
                var delay: TimeInterval = 0
                var failed = false
                let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: InputStreamBody.chunkSize) { pointer in
                    guard let base = pointer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
                    let limit = min(pointer.count, InputStreamBody.chunkSize)
                    let read: Int
                    if let multipart = stream as? MultipartBodyStream {
                        delay = multipart.throttleDelay
                        read = multipart.readPacket(base, maxLength: limit)
                    } else {
                        read = stream.read(base, maxLength: limit)
                    }
                    failed = read < 0
                    return min(max(0, read), limit)
                }
                if failed {
                    throw CourierError.requestSerializationFailed(
                        .bodyStreamFailed(stream.streamError.map { "\($0)" } ?? "the body stream failed"))
                }
                return count == 0 ? nil : (buffer, delay)
            }
        }

        /// Closes the stream (on its queue, after any read in progress).
        func close() {
            queue.async { [self] in stream.close() }
        }
    }
}
