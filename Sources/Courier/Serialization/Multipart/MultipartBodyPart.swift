import CourierEngine
import Foundation
import Synchronization

/// One part of a multipart form: its headers and where its body comes from.
struct MultipartBodyPart: Sendable {
    /// Where the part's bytes come from; every source has a length known up front, so the
    /// form's `Content-Length` is exact without reading anything.
    enum Source: Sendable {
        /// Bytes in memory.
        case data(Data)
        /// A regular file, read in chunks as the body is sent; `appended` is the file `path`
        /// named when the part was appended (a path naming another file by then is refused).
        case file(path: String, appended: RegularFile.Identity)
        /// The caller's input stream; readable once.
        case inputStream(InputStreamBox)
        /// Chunks produced by the caller's async sequence; readable once.
        case produced(@Sendable (_ sink: (Data) async throws -> Void) async throws -> Void)
    }

    /// `Name: value\r\n` for each header, then the blank line; rendered once, since the
    /// length, every body write and every input stream need it.
    let headerBytes: Data
    let source: Source
    let length: Int64

    init(headers: [(name: String, value: String)], source: Source, length: Int64) {
        var text = ""
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        text += "\r\n"
        headerBytes = Data(text.utf8)
        self.source = source
        self.length = length
    }

    /// Whether the bytes can be read more than once (a redirect or retry needs that).
    var isReplayable: Bool {
        switch source {
        case .data, .file: return true
        case .inputStream, .produced: return false
        }
    }
}

/// An `InputStream` handed to ``MultipartFormData/appendPart(inputStream:name:fileName:length:mimeType:)``.
///
/// `InputStream` is not `Sendable`: the caller gives it away (`sending`) and from then on it
/// lives inside a mutex, touched only by the body producer that reads the parts in order.
final class InputStreamBox: Sendable {
    private let stream: Mutex<InputStream>

    init(_ stream: sending InputStream) { self.stream = Mutex(stream) }

    /// Reads up to `maxLength` bytes synchronously (for ``MultipartBodyStream``); opens the
    /// stream on first use. Returns nil at the end; throws when the stream fails.
    func readChunk(maxLength: Int) throws -> Data? {
        let (chunk, failure): (Data?, String?) = stream.withLock { stream in
            if stream.streamStatus == .notOpen { stream.open() }
            var buffer = [UInt8](repeating: 0, count: maxLength)
            let count = stream.read(&buffer, maxLength: maxLength)
            if count < 0 { return (nil, InputStreamBody.refusal(of: stream)) }
            if count == 0 {
                stream.close()
                return (nil, nil)
            }
            return (Data(buffer[0..<count]), nil)
        }
        if let failure {
            throw CourierError.requestSerializationFailed(.bodyStreamFailed("input stream \(failure)"))
        }
        return chunk
    }

    /// Reads the whole stream into `sink` in chunks of `chunkSize`, each read on a serial queue
    /// of this stream's own: a stream that blocks (a pipe) holds no cooperative-pool thread.
    func read(chunkSize: Int, into sink: (Data) async throws -> Void) async throws {
        let queue = DispatchQueue(label: "courier.multipart.input-stream")
        while let chunk = try await BlockingRead.on(queue, { try self.readChunk(maxLength: chunkSize) }) {
            try await sink(chunk)
        }
    }
}
