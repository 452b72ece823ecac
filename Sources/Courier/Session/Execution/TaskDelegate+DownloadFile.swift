import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1

/// The task's side of downloads: a data task becoming a download task, opening the file a
/// response goes to (a resumed download following ``ResumeResponseRule``), what an early end
/// leaves behind (``PartialDownloadRule``), and moving the finished file to its destination.
/// Runs on the task's callback queue (the move, at the end of the task).
extension TaskDelegate {
    /// AFN's did-become-download-task: the rest of the body goes to a file, and a new
    /// ``DownloadTask`` (sharing this transfer's state) takes the data task's place.
    func becomeDownload(_ dataTask: DataTask) {
        let downloadTask = environment.registry.replace(dataTask, withDownloadTaskRunBy: self)
        _ = becameTask.storeIfNil(downloadTask)
        run.withLock { $0.machine.becameDownload() }
        environment.hooks.dataTaskDidBecomeDownloadTask?(dataTask, downloadTask)
    }

    /// Picks the file the body goes to. A resumed download follows ``ResumeResponseRule``: it
    /// appends to its partial file on a 206 starting exactly at the requested offset, starts the
    /// file over (truncated, written from 0) on 200 unless the resume data forbids it
    /// (``DownloadResumeData/allowsRestart`` false and the file not empty), is already complete on 416 naming the
    /// file's size, and fails with ``CourierError/invalidResumeResponse(url:reason:)`` on any
    /// other 206, leaving the partial file as it was; anything else goes to a new temporary file.
    /// Any download, resumed or not, fails so on a 206 to a request without `Range` (RFC 9110
    /// allows none): its bytes are a part, never the whole file.
    func openDownloadFile(for head: HTTPResponseHead, expectedLength: Int64) {
        let status = Int(head.status.code)
        do {
            let sink: DownloadSink
            var resumedAt: (offset: Int64, expectedTotal: Int64)?
            if let resumeData {
                // The offset actually asked for: nil when the request had no Range (it starts
                // over), 0 for a Range other than `bytes=N-`.
                let rangeHeader = task.originalRequest?.value(forHTTPHeaderField: "Range")
                let requested = rangeHeader.map { ContentRange.requestedOffset(rangeHeader: $0) ?? 0 }
                let rule = ResumeResponseRule.decide(
                    status: status, requestedOffset: requested, contentRange: head.headers.first(name: "content-range"),
                    contentLength: head.headers.first(name: "content-length"), knownTotal: resumeData.totalLength,
                    contentCoded: ResumeResponseRule.isContentCoded(head.headers.first(name: "content-encoding")),
                    mayRestart: resumeData.allowsRestart || resumeData.offset == 0)
                switch rule {
                case .append(let offset, let expectedTotal):
                    sink = try DownloadSink(fileURL: resumeData.partialFileURL, offset: offset, isCallersFile: true)
                    resumedAt = (offset, expectedTotal)
                case .restart(let expectedTotal):
                    sink = try DownloadSink(fileURL: resumeData.partialFileURL, offset: 0, isCallersFile: true)
                    resumedAt = (0, expectedTotal)
                case .alreadyComplete:
                    run.withLock { $0.machine.downloadAlreadyComplete() }
                    return
                case .notResumed:
                    sink = try DownloadSink()
                case .refuse(let reason):
                    throw CourierError.invalidResumeResponse(url: task.currentRequest?.url, reason: reason)
                }
            } else {
                if status == 206, task.originalRequest?.value(forHTTPHeaderField: "Range") == nil,
                    case .refuse(let reason) = ResumeResponseRule.decide(
                        status: status, requestedOffset: nil, contentRange: head.headers.first(name: "content-range"),
                        contentLength: nil, knownTotal: nil)
                {
                    throw CourierError.invalidResumeResponse(url: task.currentRequest?.url, reason: reason)
                }
                sink = try DownloadSink()
            }
            run.withLock { run in
                run.download = sink
                run.machine.downloadFileOpened(resumedAt: resumedAt?.offset)
            }
            if let resumedAt { resumed(at: resumedAt.offset, expectedTotal: resumedAt.expectedTotal) }
        } catch {
            fail(error as? CourierError ?? .cannotWriteDownloadFile(path: resumeData?.partialFileURL.path ?? "", reason: "\(error)"))
        }
    }

    /// Reports a resumed download's starting point (AFN's did-resume-at-offset).
    func resumed(at offset: Int64, expectedTotal: Int64) {
        snapshot.withLock { snapshot in
            snapshot.countOfBytesReceived = offset
            snapshot.countOfBytesExpectedToReceive = expectedTotal
        }
        progress.update(.download, total: expectedTotal, completed: offset)
        if let downloadTask = task as? DownloadTask {
            environment.hooks.downloadTaskDidResume?(downloadTask, offset, expectedTotal)
        }
    }

    /// A download that ended early: keeps the file with its resume data when
    /// ``PartialDownloadRule`` says so; otherwise removes a temporary file. The caller's
    /// partial file is never removed.
    func partialDownload(at file: URL, sink: DownloadSink, response: HTTPURLResponse?, keep: Bool) -> DownloadResumeData? {
        let produced = PartialDownloadRule.resumeData(
            for: file, response: response, keep: keep, wroteBytes: sink.bytesWritten > 0, isCallersFile: sink.isCallersFile,
            originalRequest: task.originalRequest, previous: resumeData)
        if produced == nil, !sink.isCallersFile { try? FileManager.default.removeItem(at: file) }
        return produced
    }

    func moveDownload(_ downloadTask: DownloadTask, from temporary: URL, response: HTTPURLResponse) -> URL? {
        var destination: URL?
        if let hook = environment.hooks.downloadTaskDidFinishDownloading {
            destination = hook(downloadTask, temporary)  // the manager-level block wins
        }
        if destination == nil, case .download(let taskDestination) = kind, let taskDestination {
            destination = taskDestination(temporary, response)
        }
        guard let destination else { return temporary }
        if destination.standardizedFileURL.path == temporary.standardizedFileURL.path {
            environment.downloadMoved(downloadTask, to: destination)  // resumed in place: nothing to move
            return destination
        }
        // Only a regular file is replaced (atomically, by rename); a directory, a symbolic link or
        // anything else at the destination is an error and nothing is deleted.
        do {
            try DownloadFileSystem.replace(destination, with: temporary)
            environment.downloadMoved(downloadTask, to: destination)
            return destination
        } catch {
            let failure = error as? CourierError
                ?? CourierError.cannotMoveDownloadedFile(from: temporary, to: destination, reason: "\(error)")
            environment.downloadMoveFailed(downloadTask, error: failure)
            return temporary
        }
    }
}
