import Dispatch
import Foundation
import NIOCore
import Synchronization

/// Writes a download's body to a file off the event loop, with backpressure: when more than
/// 4 MiB wait to be written, the engine stops reading the socket until the disk catches up to
/// 1 MiB.
final class DownloadSink: Sendable {
    private static let pauseAbove = 4 << 20
    private static let resumeBelow = 1 << 20

    /// The file written: a new temporary file, or a resumed download's partial file.
    let temporaryURL: URL
    /// Whether the file is the caller's partial file (never deleted by the session).
    let isCallersFile: Bool
    private let handle: FileHandle
    private let queue = DispatchQueue(label: "courier.download-sink")
    private let pending = Mutex<(bytes: Int, paused: Bool, failed: (any Error)?, written: Int64)>((0, false, nil, 0))

    /// A sink writing a new file in the temporary directory (created exclusively).
    convenience init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("CourierDownload-\(UUID().uuidString).tmp")
        try self.init(fileURL: url, offset: 0, isCallersFile: false, exclusive: true)
    }

    /// A sink writing `fileURL` from `offset`: the file is created when missing, cut after
    /// `offset` (0: starts over), and must be a regular file (a symbolic link is refused, not
    /// followed) holding at least `offset` bytes.
    /// - Throws: ``CourierError/cannotWriteDownloadFile(path:reason:)``.
    init(fileURL url: URL, offset: Int64, isCallersFile: Bool, exclusive: Bool = false) throws {
        self.handle = try DownloadFileSystem.openForWriting(path: url.path, offset: offset, exclusive: exclusive)
        self.temporaryURL = url
        self.isCallersFile = isCallersFile
    }

    /// Bytes written to the file by this sink so far.
    var bytesWritten: Int64 { pending.withLock { $0.written } }

    /// Queues `buffer` for writing; calls `setReadingPaused(true)` when too much waits, and
    /// `setReadingPaused(false)` once the disk has caught up (the task merges this with its
    /// other reasons to pause, so one reason's resume never cancels another's pause).
    func write(_ buffer: ByteBuffer, setReadingPaused: @escaping @Sendable (Bool) -> Void) {
        let count = buffer.readableBytes
        let pause = pending.withLock { state -> Bool in
            state.bytes += count
            if !state.paused && state.bytes > Self.pauseAbove {
                state.paused = true
                return true
            }
            return false
        }
        if pause { setReadingPaused(true) }
        queue.async { [self] in
            var failure: (any Error)?
            do {
                try buffer.withUnsafeReadableBytes { try self.handle.write(contentsOf: $0) }  // no copy per chunk
            } catch {
                failure = error
            }
            let resume = self.pending.withLock { state -> Bool in
                if let failure { state.failed = failure } else { state.written += Int64(count) }
                state.bytes -= count
                if state.paused && state.bytes < Self.resumeBelow {
                    state.paused = false
                    return true
                }
                return false
            }
            if resume { setReadingPaused(false) }
        }
    }

    /// Waits for pending writes, closes the file, and returns its URL (nil if writing failed).
    func close() -> URL? {
        queue.sync {}
        try? handle.close()
        return pending.withLock { $0.failed } == nil ? temporaryURL : nil
    }
}
