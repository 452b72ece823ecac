import CourierEngine
import Dispatch
import Foundation
import NIOCore

/// Sends a Foundation `InputStream` (a request's `httpBodyStream`) as an engine body, read in
/// 64 KiB chunks (up to four per hop) on a serial queue of the stream's own, so memory stays bounded and a stream
/// that blocks (a pipe whose writer is late) holds neither an event loop nor a thread of
/// Swift's cooperative pool. A throttled multipart stream
/// (``MultipartFormData/throttleBandwidth(packetSize:delay:)``) pauses after each packet with
/// `Task.sleep`, holding no thread at all.
enum InputStreamBody {
    static let chunkSize = 64 * 1024
    /// Reads of ``chunkSize`` per hop to the stream's queue at most (256 KiB): one hop and one
    /// engine write per batch instead of per 64 KiB.
    static let readsPerHop = 4

    static func make(_ stream: InputStream, length: Int64?) -> RequestBody {
        // A body known to fit in one read never reserves more than one chunk.
        let batch = length.map { $0 <= Int64(chunkSize) } == true ? chunkSize : chunkSize * readsPerHop
        let reader = Reader(stream, batchCapacity: batch)
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

    /// Why `stream` refused a read (its `read` returned a negative count), to follow "the
    /// body stream" or another name of it: "failed: …", "is closed: …" or "refused a read …".
    /// corelibs' `streamError` traps when the stream holds no error (one closed already: a
    /// request's `httpBodyStream`, or a multipart part's stream, sent once and sent again by a
    /// 307 or a retry), so it is read only in the error state. Call on the stream's own queue.
    static func refusal(of stream: InputStream) -> String {
        switch stream.streamStatus {
        case .error:
            return "failed: " + (stream.streamError.map { "\($0)" } ?? "unknown error")
        case .closed:
            return "is closed: a stream is read once (was it sent already?)"
        default:
            return "refused a read (status \(stream.streamStatus.rawValue))"
        }
    }

    /// Reads the stream on its own serial queue. `@unchecked Sendable`: the stream is touched
    /// only on `queue`, one read at a time.
    private final class Reader: @unchecked Sendable {
        private let stream: InputStream
        private let queue = DispatchQueue(label: "courier.input-stream-body")
        private var opened = false

        private let batchCapacity: Int

        init(_ stream: InputStream, batchCapacity: Int) {
            self.stream = stream
            self.batchCapacity = batchCapacity
        }

        /// The next chunk and the pause to make before sending it; nil at the end. One hop to
        /// the queue reads up to ``InputStreamBody/readsPerHop`` chunks of 64 KiB into one
        /// buffer while the stream fills each read (a file, data in memory); a short read (a
        /// pipe with nothing more yet) or a throttled multipart stream (one packet, then its
        /// pause) ends the batch, so nothing already read waits for more.
        func next() async throws -> (chunk: ByteBuffer, delay: TimeInterval)? {
            try await BlockingRead.on(queue) { [self] in
                if !opened {
                    opened = true
                    stream.open()
                }
                // Reserved at once: growing 64 -> 128 -> 256 KiB would copy what was read.
                var buffer = ByteBufferAllocator().buffer(capacity: batchCapacity)
                var delay: TimeInterval = 0
                var failed = false
                var reads = 0
                var full = true
                while full, !failed, delay == 0, reads < InputStreamBody.readsPerHop {
                    reads += 1
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: InputStreamBody.chunkSize) { pointer in
                        guard let base = pointer.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                            full = false
                            return 0
                        }
                        let limit = min(pointer.count, InputStreamBody.chunkSize)
                        let read: Int
                        if let multipart = stream as? MultipartBodyStream {
                            delay = multipart.throttleDelay
                            read = multipart.readPacket(base, maxLength: limit)
                        } else {
                            read = stream.read(base, maxLength: limit)
                        }
                        failed = read < 0
                        full = read == limit
                        return min(max(0, read), limit)
                    }
                }
                // An engine error, which the engine passes on as it is (a session error would
                // reach the caller as the engine's `invalidBody` with its text wrapped twice).
                if failed { throw EngineError.invalidBody("the body stream \(InputStreamBody.refusal(of: stream))") }
                return buffer.readableBytes == 0 ? nil : (buffer, delay)
            }
        }

        /// Closes the stream (on its queue, after any read in progress).
        func close() {
            queue.async { [self] in stream.close() }
        }
    }
}
