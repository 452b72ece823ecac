import CourierEngine
import Foundation
import NIOCore

/// Sends a Foundation `InputStream` (a request's `httpBodyStream`) as an engine body, read in
/// 64 KiB chunks off the event loop, so memory stays bounded.
enum InputStreamBody {
    static func make(_ stream: InputStream, length: Int64?) -> RequestBody {
        let box = StreamBox(stream)
        return .stream(length: length) { writer in
            let stream = box.stream
            stream.open()
            defer { stream.close() }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = stream.read(&buffer, maxLength: buffer.count)
                if count < 0 {
                    throw CourierError.requestSerializationFailed(
                        .bodyStreamFailed(stream.streamError.map { "\($0)" } ?? "the body stream failed"))
                }
                if count == 0 { break }
                try await writer.write(ByteBuffer(bytes: buffer[0..<count]))
            }
        }
    }

    /// `@unchecked Sendable`: the stream is used by exactly one body producer, sequentially.
    private final class StreamBox: @unchecked Sendable {
        let stream: InputStream
        init(_ stream: InputStream) { self.stream = stream }
    }
}
