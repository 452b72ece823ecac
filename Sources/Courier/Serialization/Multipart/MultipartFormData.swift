public import CourierEngine
public import Foundation
public import NIOCore
import Synchronization

/// AFNetworking's `AFStreamingMultipartFormData`: the parts of a `multipart/form-data` body,
/// sent as a stream read part by part.
///
/// Parts are added in order with the `appendPart` methods (normally inside the
/// `constructingBody` closure of ``HTTPRequestSerializer/multipartFormRequest(method:urlString:parameters:constructingBody:)``).
/// The body follows AFN's framing exactly:
/// ```
/// --B\r\n  Headers\r\n \r\n  body      (first part)
/// \r\n--B\r\n  Headers\r\n \r\n  body    (each later part)
/// \r\n--B--\r\n                       (end)
/// ```
/// with `B` = ``boundary`` (`Boundary+` and 16 uppercase hex digits). ``contentLength`` is
/// exact and computed from declared lengths (file sizes are read at append time; no file is
/// read). The body is produced by ``makeRequestBody()`` (for `HTTPEngine`),
/// ``writeBody(to:)`` or ``writeBody(into:)``: files are read in chunks of at most
/// ``chunkSize`` bytes, so memory stays bounded whatever the file sizes.
///
/// File and data parts can be sent any number of times; input-stream and async-sequence parts
/// only once. Thread-safe: parts and settings live behind a mutex.
public final class MultipartFormData: Sendable {
    /// AFN's `kAFUploadStream3GSuggestedPacketSize`: 16 KiB.
    public static let suggestedPacketSize = 16 * 1024
    /// AFN's `kAFUploadStream3GSuggestedDelay`: 0.2 s.
    public static let suggestedDelay: TimeInterval = 0.2
    /// The largest chunk read from a file or written to the connection at once: 64 KiB.
    public static let chunkSize = 64 * 1024

    struct State {
        var parts: [MultipartBodyPart] = []
        var packetSize = MultipartFormData.chunkSize
        var delay: TimeInterval = 0
    }

    /// The boundary, e.g. `Boundary+0123456789ABCDEF`.
    public let boundary: String
    /// The encoding of form-data parameter values (set from the request serializer).
    public let stringEncoding: String.Encoding
    private let state = Mutex(State())

    /// Creates an empty form with a random boundary (or the given one).
    public init(boundary: String = MultipartFormData.makeBoundary(), stringEncoding: String.Encoding = .utf8) {
        self.boundary = boundary
        self.stringEncoding = stringEncoding
    }

    /// AFN's `AFCreateMultipartFormBoundary`: `Boundary+%08X%08X` of two random numbers.
    public static func makeBoundary() -> String {
        func hex(_ value: UInt32) -> String {
            let digits = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: 8 - digits.count) + digits
        }
        return "Boundary+" + hex(UInt32.random(in: .min ... .max)) + hex(UInt32.random(in: .min ... .max))
    }

    /// `multipart/form-data; boundary=<boundary>`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Whether no part was appended (such a form sends no body).
    public var isEmpty: Bool { state.withLock { $0.parts.isEmpty } }

    /// Whether the body can be produced more than once (no stream or sequence parts).
    public var isReplayable: Bool { state.withLock { $0.parts.allSatisfy(\.isReplayable) } }

    /// The exact byte count of the body: boundaries, part headers and declared body lengths.
    /// Zero for an empty form; -1 when a part declares a negative length or the lengths add up
    /// past `Int64.max` (sending such a form fails with
    /// ``CourierError/RequestSerializationReason/bodyStreamFailed(_:)`` saying which).
    public var contentLength: Int64 {
        (try? checkedContentLength()) ?? -1
    }

    /// ``contentLength``, or the typed error saying why the form has none.
    func checkedContentLength() throws -> Int64 {
        try Self.length(of: segments(of: state.withLock { $0.parts }))
    }

    /// The sum of the segments' lengths, checked: each declared part length is the caller's
    /// number. Parts are counted from 0, as the body's other errors name them.
    static func length(of segments: [MultipartBodyStream.Segment]) throws -> Int64 {
        var total: Int64 = 0
        var partIndex = -1
        for segment in segments {
            if case .part = segment { partIndex += 1 }
            guard segment.length >= 0 else {
                throw CourierError.requestSerializationFailed(
                    .bodyStreamFailed("part \(partIndex) declares a negative length (\(segment.length) bytes)"))
            }
            let (sum, overflow) = total.addingReportingOverflow(segment.length)
            guard !overflow else {
                throw CourierError.requestSerializationFailed(
                    .bodyStreamFailed("the declared lengths add up to more than \(Int64.max) bytes"))
            }
            total = sum
        }
        return total
    }

    // MARK: - Appending parts

    /// Appends a file part named after the file, with the MIME type of its extension (from
    /// ``MIMETypes``; `application/octet-stream` when unknown).
    /// - Throws: ``CourierError/RequestSerializationReason/notAFileURL(_:)``,
    ///   ``CourierError/RequestSerializationReason/fileNotFound(path:)``,
    ///   ``CourierError/RequestSerializationReason/notARegularFile(path:)``,
    ///   ``CourierError/RequestSerializationReason/fileNotReadable(path:)``.
    public func appendPart(fileURL: URL, name: String) throws {
        try appendPart(
            fileURL: fileURL, name: name, fileName: fileURL.lastPathComponent,
            mimeType: MIMETypes.mimeType(forPathExtension: fileURL.pathExtension))
    }

    /// Appends a file part with an explicit file name and MIME type. The file's size is read
    /// now; its bytes are read when the body is sent. A symbolic link is followed. A path that
    /// names anything but a regular file (a FIFO, a device, a directory), now or when the body
    /// is sent, fails with ``CourierError/RequestSerializationReason/notARegularFile(path:)``
    /// without being opened. The body sends the file appended: if the path names another file
    /// by then (replaced, or a link to another file put in its place), sending fails with
    /// ``CourierError/RequestSerializationReason/bodyStreamFailed(_:)`` before any of its bytes.
    /// - Throws: as ``appendPart(fileURL:name:)``.
    public func appendPart(fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        guard fileURL.isFileURL else {
            throw CourierError.requestSerializationFailed(.notAFileURL(fileURL.absoluteString))
        }
        let path = fileURL.path
        let appended = try MultipartFileReader.identity(atPath: path)
        append(
            MultipartBodyPart(
                headers: Self.fileHeaders(name: name, fileName: fileName, mimeType: mimeType),
                source: .file(path: path, appended: appended), length: appended.size))
    }

    /// Appends a part read from `inputStream`, which must yield exactly `length` bytes (AFN
    /// trusts the length; here a mismatch fails the upload). The stream is opened, read and
    /// closed by the body producer; don't use it afterwards. Readable once.
    public func appendPart(inputStream: sending InputStream, name: String, fileName: String, length: Int64, mimeType: String) {
        let box = InputStreamBox(inputStream)
        append(
            MultipartBodyPart(
                headers: Self.fileHeaders(name: name, fileName: fileName, mimeType: mimeType),
                source: .inputStream(box),
                length: length))
    }

    /// Appends a part whose bytes come from an async sequence of chunks, which must add up to
    /// exactly `length` bytes (a mismatch fails the upload). Iterated once.
    public func appendPart<Chunks: AsyncSequence & Sendable>(
        chunks: Chunks,
        name: String,
        fileName: String,
        length: Int64,
        mimeType: String
    ) where Chunks.Element == Data {
        append(
            MultipartBodyPart(
                headers: Self.fileHeaders(name: name, fileName: fileName, mimeType: mimeType),
                source: .produced({ sink in
                    for try await chunk in chunks { try await sink(chunk) }
                }),
                length: length))
    }

    /// Appends in-memory file data with a file name and MIME type.
    public func appendPart(fileData: Data, name: String, fileName: String, mimeType: String) {
        append(
            MultipartBodyPart(
                headers: Self.fileHeaders(name: name, fileName: fileName, mimeType: mimeType),
                source: .data(fileData), length: Int64(fileData.count)))
    }

    /// Appends a plain form field: `Content-Disposition: form-data; name="<name>"` only
    /// (`"`, CR and LF in the name written %22, %0D, %0A, as browsers do).
    public func appendPart(formData: Data, name: String) {
        append(
            MultipartBodyPart(
                headers: [("Content-Disposition", "form-data; name=\"\(Self.quotable(name))\"")],
                source: .data(formData), length: Int64(formData.count)))
    }

    /// Appends a part with arbitrary headers, written in the given order.
    public func appendPart(headers: [(name: String, value: String)], body: Data) {
        append(MultipartBodyPart(headers: headers, source: .data(body), length: Int64(body.count)))
    }

    /// Appends a part with arbitrary headers, written sorted by name (a dictionary has no
    /// order; AFN's order was unspecified too).
    public func appendPart(headers: [String: String], body: Data) {
        appendPart(headers: headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }, body: body)
    }

    /// Limits the upload rate: the body is sent in packets of at most `packetSize` bytes with
    /// a pause of `delay` seconds after each (AFN suggests ``suggestedPacketSize`` and
    /// ``suggestedDelay`` for 3G). A non-positive `packetSize` restores the default.
    public func throttleBandwidth(packetSize: Int, delay: TimeInterval) {
        state.withLock { state in
            state.packetSize = packetSize > 0 ? min(packetSize, Self.chunkSize) : Self.chunkSize
            state.delay = max(0, delay)
        }
    }

    // MARK: - Producing the body

    /// A streamed body for `HTTPEngine` with `Content-Length` = ``contentLength``. Each part
    /// is read as it is sent, in chunks of at most ``chunkSize``; the writer's backpressure
    /// bounds memory. A part that yields a different length than declared, or can't be read,
    /// fails the request with `EngineError.invalidBody` naming the part (through a session:
    /// ``CourierError/engine(_:)``).
    public func makeRequestBody() -> RequestBody {
        // A form with no length (see ``contentLength``) fails at once in `writeBody`.
        .stream(length: try? checkedContentLength()) { writer in
            // File parts are read straight into the buffers the engine sends (no `Data` and no
            // copy per chunk); framing and in-memory parts are copied into a buffer once.
            do {
                try await self.writeBody(intoBuffers: { chunk in try await writer.write(chunk) })
            } catch CourierError.requestSerializationFailed(.bodyStreamFailed(let reason)) {
                // The engine reports a body that fails while it is sent as its `invalidBody`, and
                // would wrap this error's text in its own: handed over as the engine's error, the
                // reason is said once.
                throw EngineError.invalidBody(reason)
            }
        }
    }

    /// Writes the whole body to `fileURL` (created or truncated), for servers that need a
    /// `Content-Length` with a file upload (AFN's `writingStreamContentsToFile`).
    /// - Throws: ``CourierError/RequestSerializationReason/bodyFileWriteFailed(path:reason:)``
    ///   or a part's read error.
    public func writeBody(to fileURL: URL) async throws {
        let path = fileURL.path
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw CourierError.requestSerializationFailed(.bodyFileWriteFailed(path: path, reason: "cannot create the file"))
        }
        defer { try? handle.close() }
        try await writeBody { chunk in
            do {
                try handle.write(contentsOf: chunk)
            } catch {
                throw CourierError.requestSerializationFailed(
                    .bodyFileWriteFailed(path: path, reason: String(describing: error)))
            }
        }
    }

    /// Produces the body chunk by chunk into `sink`, honouring the throttle. Chunks are at
    /// most ``chunkSize`` bytes (or the throttle's packet size).
    /// - Throws: a part's read error, a length mismatch
    ///   (``CourierError/RequestSerializationReason/bodyStreamFailed(_:)``), or `sink`'s error.
    public func writeBody(into sink: (Data) async throws -> Void) async throws {
        try await produceBody(into: sink)
    }

    /// ``writeBody(into:)`` into `ByteBuffer`s, as ``makeRequestBody()`` sends them: file parts
    /// are read by read(2) straight into the buffers handed to `sink` (no `Data`, no copy);
    /// framing and the other parts are copied into a buffer once. Same chunking, throttle and
    /// errors as ``writeBody(into:)``.
    public func writeBody(intoBuffers sink: (ByteBuffer) async throws -> Void) async throws {
        try await produceBody(into: sink)
    }

    /// ``writeBody(into:)`` for any chunk type: file parts are read as `Chunk`s
    /// (``MultipartFileReader/read(atPath:appended:length:chunkSize:into:)``); everything else is made
    /// from `Data`.
    func produceBody<Chunk: MultipartChunk>(into sink: (Chunk) async throws -> Void) async throws {
        let (parts, packetSize, delay) = state.withLock { ($0.parts, $0.packetSize, $0.delay) }

        // AFN's `numberOfBytesInPacket` and `delay`: packets of at most `packetSize`
        // bytes, with a pause after each when throttled.
        func emit(_ chunk: Chunk) async throws {
            if chunk.byteCount <= packetSize, delay <= 0 {
                try await sink(chunk)
                return
            }
            var offset = 0
            while offset < chunk.byteCount {
                let end = min(offset + packetSize, chunk.byteCount)
                try await sink(chunk.bytes(offset..<end))
                offset = end
                if delay > 0 { try await Task.sleep(nanoseconds: BlockingRead.nanoseconds(delay)) }
            }
        }

        // A part's bytes, checked against its declared length as they go.
        func write(_ part: MultipartBodyPart, index: Int) async throws {
            var written: Int64 = 0
            func counted(_ chunk: Chunk) async throws {
                written += Int64(chunk.byteCount)
                guard written <= part.length else {
                    throw CourierError.requestSerializationFailed(
                        .bodyStreamFailed("part \(index) is longer than its declared \(part.length) bytes"))
                }
                try await emit(chunk)
            }
            func countedData(_ data: Data) async throws { try await counted(Chunk(data)) }
            switch part.source {
            case .data(let data): try await countedData(data)
            case .file(let path, let appended):
                try await MultipartFileReader.read(
                    atPath: path, appended: appended, length: part.length, chunkSize: Self.chunkSize, into: counted)
            case .inputStream(let box): try await box.read(chunkSize: Self.chunkSize, into: countedData)
            case .produced(let produce): try await produce(countedData)
            }
            guard written == part.length else {
                throw CourierError.requestSerializationFailed(
                    .bodyStreamFailed("part \(index) produced \(written) of its declared \(part.length) bytes"))
            }
        }

        let segments = segments(of: parts)
        _ = try Self.length(of: segments)  // a hostile declared length fails before any byte
        var partIndex = 0
        for segment in segments {
            switch segment {
            case .data(let framing): try await emit(Chunk(framing))
            case .part(let part):
                try await write(part, index: partIndex)
                partIndex += 1
            }
        }
    }

    /// AFN's `AFMultipartBodyStream`: a synchronous `InputStream` over the body, for
    /// `URLRequest.httpBodyStream` and other stream consumers. Each call makes a new stream
    /// (AFN's `NSCopying`, used for `needNewBodyStream`). Reads honour the throttle (at most
    /// the packet size per read, then a `Thread.sleep` of the delay). Async-sequence parts
    /// can't be read synchronously: the stream fails on reaching one (send such forms with
    /// ``makeRequestBody()``). The stream is not thread-safe: read it from one thread.
    public func makeInputStream() -> InputStream {
        let (parts, packetSize, delay) = state.withLock { ($0.parts, $0.packetSize, $0.delay) }
        return MultipartBodyStream(segments: segments(of: parts), packetSize: packetSize, delay: delay)
    }

    // MARK: - Framing

    /// The body as AFN frames it, shared by ``contentLength``, ``writeBody(into:)`` and
    /// ``makeInputStream()``: each part preceded by its boundary (`--B` first, `\r\n--B`
    /// after) and headers, then `\r\n--B--\r\n`. A form without parts has no segments.
    func segments(of parts: [MultipartBodyPart]) -> [MultipartBodyStream.Segment] {
        guard !parts.isEmpty else { return [] }
        var segments: [MultipartBodyStream.Segment] = []
        segments.reserveCapacity(parts.count * 2 + 1)
        for (index, part) in parts.enumerated() {
            let opening = index == 0 ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n"
            segments.append(.data(Data(opening.utf8) + part.headerBytes))
            segments.append(.part(part))
        }
        segments.append(.data(Data("\r\n--\(boundary)--\r\n".utf8)))
        return segments
    }

    private func append(_ part: MultipartBodyPart) {
        state.withLock { $0.parts.append(part) }
    }

    static func fileHeaders(name: String, fileName: String, mimeType: String) -> [(name: String, value: String)] {
        [
            ("Content-Disposition", "form-data; name=\"\(quotable(name))\"; filename=\"\(quotable(fileName))\""),
            ("Content-Type", mimeType),
        ]
    }

    /// `value` as it may sit between a `Content-Disposition` parameter's quotes: `"`, CR and LF
    /// written %22, %0D and %0A (WHATWG's multipart/form-data encoding, what browsers send), so
    /// a name from input or a file's name on disk can't close its quotes or start a header or
    /// a part. Anything else is kept as it is.
    static func quotable(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == 0x0D || $0 == 0x0A }) else { return value }
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

/// A chunk of a multipart body: `Data` for ``MultipartFormData/writeBody(into:)``, a
/// `ByteBuffer` for ``MultipartFormData/makeRequestBody()`` (file parts read straight into it).
protocol MultipartChunk: Sendable {
    /// The chunk holding `data`'s bytes.
    init(_ data: Data)
    var byteCount: Int { get }
    /// The bytes at `range` (offsets from the chunk's start), without a copy where possible.
    func bytes(_ range: Range<Int>) -> Self
    /// Up to `count` bytes read from `file` (fewer only at its end; none at its end). Blocking.
    static func read(from file: FileHandle, count: Int) throws -> Self
}

extension Data: MultipartChunk {
    var byteCount: Int { count }

    static func read(from file: FileHandle, count: Int) throws -> Data {
        try file.read(upToCount: count) ?? Data()
    }

    func bytes(_ range: Range<Int>) -> Data {
        self[(startIndex + range.lowerBound)..<(startIndex + range.upperBound)]
    }
}

extension ByteBuffer: MultipartChunk {
    init(_ data: Data) { self.init(bytes: data) }

    var byteCount: Int { readableBytes }

    static func read(from file: FileHandle, count: Int) throws -> ByteBuffer {
        try MultipartFileReader.readBuffer(file.fileDescriptor, count: count)
    }

    func bytes(_ range: Range<Int>) -> ByteBuffer {
        getSlice(at: readerIndex + range.lowerBound, length: range.count) ?? ByteBuffer()
    }
}
