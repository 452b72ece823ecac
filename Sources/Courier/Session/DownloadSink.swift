import CourierEngine
import Dispatch
import Foundation
import NIOCore
import Synchronization

/// Writes a download's body to a temporary file off the event loop, with backpressure: when
/// more than 4 MiB wait to be written, the engine stops reading the socket until the disk
/// catches up to 1 MiB.
final class DownloadSink: Sendable {
    private static let pauseAbove = 4 << 20
    private static let resumeBelow = 1 << 20

    let temporaryURL: URL
    private let handle: FileHandle
    private let queue = DispatchQueue(label: "courier.download-sink")
    private let pending = Mutex<(bytes: Int, paused: Bool, failed: (any Error)?)>((0, false, nil))

    init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("CourierDownload-\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CourierError.cannotMoveDownloadedFile(from: url, to: url, reason: "cannot create a temporary file")
        }
        self.temporaryURL = url
        self.handle = try FileHandle(forWritingTo: url)
    }

    /// Queues `buffer` for writing; pauses `engineTask`'s reading when too much waits.
    func write(_ buffer: ByteBuffer, backpressure engineTask: EngineTask?) {
        let count = buffer.readableBytes
        let pause = pending.withLock { state -> Bool in
            state.bytes += count
            if !state.paused && state.bytes > Self.pauseAbove {
                state.paused = true
                return true
            }
            return false
        }
        if pause { engineTask?.setReadingPaused(true) }
        queue.async { [self] in
            do {
                try self.handle.write(contentsOf: Data(buffer.readableBytesView))
            } catch {
                self.pending.withLock { $0.failed = error }
            }
            let resume = self.pending.withLock { state -> Bool in
                state.bytes -= count
                if state.paused && state.bytes < Self.resumeBelow {
                    state.paused = false
                    return true
                }
                return false
            }
            if resume { engineTask?.setReadingPaused(false) }
        }
    }

    /// Waits for pending writes, closes the file, and returns its URL (nil if writing failed).
    func close() -> URL? {
        queue.sync {}
        try? handle.close()
        return pending.withLock { $0.failed } == nil ? temporaryURL : nil
    }
}
