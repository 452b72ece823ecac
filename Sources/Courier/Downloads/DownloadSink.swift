import Foundation
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a download's body to its file, chunk by chunk, where the task handles its events.
///
/// The writes happen on the task's own callback queue (``TaskCallbackQueue``), never on an
/// event loop: that queue already takes the body off the loop in batches, and its backlog
/// bound (reading pauses above 4 MiB waiting) is also the bound on bytes waiting for the disk.
/// So a chunk costs one `write(2)` and no thread hop of its own.
final class DownloadSink: Sendable {
    /// The file written: a new temporary file, or a resumed download's partial file.
    let temporaryURL: URL
    /// Whether the file is the caller's partial file (never deleted by the session).
    let isCallersFile: Bool
    private let handle: FileHandle
    /// Bytes in the file so far, and the first write that failed (nothing is written after it).
    private let state = Mutex<(written: Int64, failed: CourierError?)>((0, nil))

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
    var bytesWritten: Int64 { state.withLock { $0.written } }

    /// The first write that failed, if one did.
    var failure: CourierError? { state.withLock { $0.failed } }

    /// Writes `buffer` at the end of what was written (no copy), before returning. Called on
    /// the task's callback queue, one chunk at a time. Returns the sink's failure, this write's
    /// or an earlier one (after which nothing more is written); nil when the bytes are in the file.
    @discardableResult
    func write(_ buffer: ByteBuffer) -> CourierError? {
        if let earlier = failure { return earlier }
        let descriptor = handle.fileDescriptor
        let failed: CourierError? = buffer.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    let reason = written == 0 ? "the file took no bytes" : String(cString: strerror(errno))
                    return CourierError.cannotWriteDownloadFile(path: temporaryURL.path, reason: reason)
                }
            }
            return nil
        }
        let count = Int64(buffer.readableBytes)
        state.withLock { state in
            if let failed { state.failed = failed } else { state.written += count }
        }
        return failed
    }

    /// Closes the file and returns its URL; nil if a write failed, or the close did (a file
    /// system may report a failed write only then).
    func close() -> URL? {
        do {
            try handle.close()
        } catch {
            state.withLock { state in
                if state.failed == nil {
                    state.failed = CourierError.cannotWriteDownloadFile(path: temporaryURL.path, reason: "closing it failed: \(error)")
                }
            }
        }
        return failure == nil ? temporaryURL : nil
    }
}

/// `write(2)`, named apart from ``DownloadSink/write(_:)``.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
