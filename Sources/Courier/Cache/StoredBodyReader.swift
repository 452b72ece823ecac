import CourierEngine
import Foundation

/// Reads a stored body file for a cache hit, in chunks, as exactly the `length` its entry
/// says — the length the replayed `Content-Length` announces. The store checked the file's
/// size when it opened it; a file that shrinks afterwards (truncated on disk while the hit is
/// sent) ends with an error instead of a short body that looks complete, and one that grows
/// has its extra bytes left unread.
struct StoredBodyReader {
    /// What ``next()`` gave.
    enum Step {
        /// Up to a chunk of the body.
        case chunk(Data)
        /// All `length` bytes were read.
        case end
        /// The file ended early or could not be read.
        case failed(EngineError)
    }

    /// The most one chunk of a replayed body holds (64 KiB), whether the body is in a file or
    /// in memory.
    static let chunkSize = 64 << 10

    private let file: FileHandle
    private let length: Int64
    /// Bytes read so far.
    private(set) var sent: Int64 = 0

    init(file: FileHandle, length: Int64) {
        self.file = file
        self.length = max(0, length)
    }

    /// Whether every byte was read.
    var isDone: Bool { sent >= length }

    /// The next chunk, the end, or why the body can't be completed.
    mutating func next() -> Step {
        guard sent < length else { return .end }
        let wanted = Int(min(Int64(Self.chunkSize), length - sent))
        let data: Data
        do {
            data = try file.read(upToCount: wanted) ?? Data()
        } catch {
            return .failed(.connectionLost("the stored body could not be read after \(sent) of \(length) bytes: \(error)"))
        }
        guard !data.isEmpty else {
            return .failed(.connectionLost("the stored body file ended after \(sent) of \(length) bytes (changed on disk)"))
        }
        sent += Int64(data.count)
        return .chunk(data)
    }

    /// Closes the file.
    func close() {
        try? file.close()
    }
}
