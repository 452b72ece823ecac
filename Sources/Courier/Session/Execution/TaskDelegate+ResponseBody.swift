import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore

/// Where a response body chunk goes: gathered in memory, streamed to a consumer, or written to
/// the download's file, with the byte counts, progress and the manager's per-chunk hooks.
extension TaskDelegate {
    /// A body chunk: one lock decides where it goes (and gathers it, for a body kept in
    /// memory). The seam where a cache would see the delivered body.
    func handleBody(_ buffer: ByteBuffer) {
        eventsBodyChunk()
        let count = buffer.readableBytes
        let (action, sink): (TaskStateMachine.BodyAction, DownloadSink?) = run.withLock { run in
            let action = run.machine.receivedBodyChunk(count: count)
            switch action {
            case .gather:
                // Straight from the buffer into the body: a separate `Data` only when a block wants the chunk.
                buffer.withUnsafeReadableBytes { run.data.append(contentsOf: $0) }
                return (action, nil)
            case .write:
                return (action, run.download)
            default:
                return (action, nil)
            }
        }
        let received: Int64
        switch action {
        case .discard:
            return
        case .failBodyTooLarge(let limit, let total):
            snapshot.withLock { $0.countOfBytesReceived = total }
            fail(.responseBodyTooLarge(url: task.currentRequest?.url, limit: limit, contentLength: nil, received: total))
            return
        case .stream(let total):
            received = total
            snapshot.withLock { $0.countOfBytesReceived = total }
            if case .stream(let stream) = kind {
                stream.append(buffer) { [self] paused in self.setReadingPaused(paused, by: .stream) }
            }
        case .write(let total):
            received = total
            let expected = snapshot.withLock { snapshot in
                snapshot.countOfBytesReceived = total
                return snapshot.countOfBytesExpectedToReceive
            }
            // Written here, on the task's queue (see DownloadSink). A full disk ends the task
            // with the file's error, and no more is read.
            if let failure = sink?.write(buffer) {
                fail(failure)
                return
            }
            if let downloadTask = task as? DownloadTask, let hook = environment.hook({ $0.downloadTaskDidWriteData }) {
                hook(downloadTask, Int64(count), total, expected)
            }
        case .gather(let total):
            received = total
            snapshot.withLock { $0.countOfBytesReceived = total }
            if let dataTask = task as? DataTask, let didReceiveData = environment.hook({ $0.dataTaskDidReceiveData }) {
                didReceiveData(dataTask, Data(buffer.readableBytesView))
            }
        }
        progress.update(.download, total: nil, completed: received)
    }
}
