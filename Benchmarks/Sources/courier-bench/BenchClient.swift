import Foundation
import NIOCore

/// What every compared client does, in the same shapes: a small GET collected in memory, a
/// download streamed to a file, an upload streamed from generated chunks (or, for URLSession,
/// from a file on disk holding the same bytes).
protocol BenchClient: Sendable {
    /// GETs `url`, expects 200, returns the body's byte count.
    func get(_ url: URL) async throws -> Int
    /// GETs `url` into the file at `path` (created or truncated), returns the bytes written.
    func download(_ url: URL, to path: String) async throws -> Int64
    /// POSTs `length` bytes (repetitions of `chunk`) to the test server's `/upload`; returns
    /// its answer (bytes it read and their SHA-256).
    func upload(_ url: URL, length: Int64, chunk: ByteBuffer, file: String?) async throws -> UploadAnswer
    /// Releases connections and threads.
    func shutdown() async
}

/// A client that runs the small GET cases only: its downloads and uploads throw.
protocol SmallCasesOnlyClient: BenchClient {
    /// The client's name in the results (`--client`), for the error.
    static var clientName: String { get }
}

extension SmallCasesOnlyClient {
    func download(_ url: URL, to path: String) async throws -> Int64 {
        throw BenchError.io("\(Self.clientName) runs the small cases only")
    }

    func upload(_ url: URL, length: Int64, chunk: ByteBuffer, file: String?) async throws -> UploadAnswer {
        throw BenchError.io("\(Self.clientName) runs the small cases only")
    }
}

/// The test server's `/upload` answer: `{"bytes":N,"sha256":"..."}`.
struct UploadAnswer: Decodable, Sendable {
    var bytes: Int64
    var sha256: String

    init(json data: Data) throws {
        do {
            self = try JSONDecoder().decode(UploadAnswer.self, from: data)
        } catch {
            let text = String(decoding: data.prefix(200), as: UTF8.self)
            throw BenchError.badAnswer("not an /upload answer: \(text)")
        }
    }
}

enum BenchError: Error, CustomStringConvertible {
    case status(Int, URL)
    case badAnswer(String)
    case io(String)

    var description: String {
        switch self {
        case .status(let code, let url): return "HTTP status \(code) from \(url.absoluteString)"
        case .badAnswer(let text): return text
        case .io(let text): return text
        }
    }
}

/// The generated upload body: `count` bytes made of repetitions of `chunk` (the last one cut).
struct RepeatedChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let chunk: ByteBuffer
    let count: Int64

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunk: ByteBuffer
        var remaining: Int64

        mutating func next() async -> ByteBuffer? {
            guard remaining > 0 else { return nil }
            let size = Int(Swift.min(Int64(chunk.readableBytes), remaining))
            remaining -= Int64(size)
            if size == chunk.readableBytes { return chunk }
            return chunk.getSlice(at: chunk.readerIndex, length: size)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunk: chunk, remaining: count)
    }

    /// The chunk every client sends: bytes `i % 251` (a period prime to the chunk size, so
    /// a misplaced chunk changes the hash).
    static func patternChunk(size: Int) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: size)
        for index in 0..<size { buffer.writeInteger(UInt8(truncatingIfNeeded: index % 251)) }
        return buffer
    }
}

/// Writes buffers to a file with write(2) on a FileHandle's descriptor.
struct FileSink: ~Copyable {
    let handle: FileHandle
    private(set) var written: Int64 = 0

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw BenchError.io("cannot create \(path)")
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    mutating func write(_ buffer: ByteBuffer) throws {
        let fd = handle.fileDescriptor
        try buffer.withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let result = Foundation.write(fd, base + offset, bytes.count - offset)
                if result < 0 {
                    if errno == EINTR { continue }
                    throw BenchError.io("write failed: errno \(errno)")
                }
                offset += result
            }
        }
        written += Int64(buffer.readableBytes)
    }

    consuming func close() throws {
        try handle.close()
    }

    /// Writes every chunk of a response body to a new file at `path`.
    ///
    /// - Returns: The bytes written.
    static func write<Body: AsyncSequence>(_ body: Body, to path: String) async throws -> Int64
    where Body.Element == ByteBuffer {
        var sink = try FileSink(path: path)
        for try await chunk in body {
            try sink.write(chunk)
        }
        let written = sink.written
        try sink.close()
        return written
    }
}
