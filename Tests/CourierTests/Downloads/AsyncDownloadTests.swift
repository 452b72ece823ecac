@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// Downloads awaited: to a destination, with download progress as an async sequence, and
/// cancelled into resume data that a second awaited download completes.
@Suite("async downloads")
struct AsyncDownloadTests {
    static func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-async-download-\(UUID().uuidString)")
    }

    @Test("download(to:): the file lands at the destination, the value is its URL, progress ends at the size")
    func downloadToDestination() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let total = 100_000
            let destination = Self.destination()
            defer { try? FileManager.default.removeItem(at: destination) }
            let download = try manager.download("range/\(total)", to: destination)
            let progress = AsyncUploadTests.collect(download.downloadProgress)
            let response = try await download.response
            #expect(response.status == .ok)
            #expect(response.value == destination)
            #expect(try Data(contentsOf: destination) == DownloadResumeTests.rangeBytes(total))
            AsyncUploadTests.expectRisingToTotal(await progress.value, total: Int64(total))
            #expect(download.task is DownloadTask)
            #expect(manager.tasks.isEmpty)
        }
    }

    @Test("a download of a 404 throws unacceptableStatusCode")
    func downloadStatusIsValidated() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let destination = Self.destination()
            defer { try? FileManager.default.removeItem(at: destination) }
            do {
                _ = try await manager.download("status/404", to: destination).value
                Issue.record("a 404 download succeeded")
            } catch CourierError.unacceptableStatusCode(let response, _, _) {
                #expect(response.statusCode == 404)
            }
        }
    }

    @Test("a destination that can't take the file throws cannotMoveDownloadedFile instead of returning another URL")
    func failedMoveThrows() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let folder = Self.destination()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            do {
                _ = try await manager.download("range/5000", to: folder).value
                Issue.record("a download 'moved' onto a directory")
            } catch CourierError.cannotMoveDownloadedFile(let from, let to, _) {
                #expect(to == folder)
                try? FileManager.default.removeItem(at: from)
            }
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        }
    }

    @Test("cancelProducingResumeData from async code, then download(resumingWith:) completes the same bytes with a 206")
    func cancelIntoResumeDataAndResume() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let total = 102_400
            // A slow drip (1 KiB chunks over 20 s) so that the cancel lands mid-body.
            let first = manager.download(URLRequest(url: server.sessionURL("/range/\(total)?duration=20&chunk_size=1024")))
            try await eventually { first.task.countOfBytesReceived > 0 }
            let produced = await first.cancelProducingResumeData()
            var resumeData = try #require(produced)
            defer { try? FileManager.default.removeItem(at: resumeData.partialFileURL) }
            #expect(resumeData.offset > 0 && resumeData.offset < Int64(total))
            do {
                _ = try await first.response
                Issue.record("a cancelled download succeeded")
            } catch CourierError.cancelled {
            }
            #expect(first.resumeData == resumeData)

            resumeData.request.url = server.sessionURL("/range/\(total)")
            let destination = Self.destination()
            defer { try? FileManager.default.removeItem(at: destination) }
            let second = manager.download(resumingWith: resumeData, to: destination)
            let progress = AsyncUploadTests.collect(second.downloadProgress)
            let response = try await second.response
            #expect(response.status.code == 206)
            #expect(try Data(contentsOf: response.value) == DownloadResumeTests.rangeBytes(total))
            let seen = await progress.value
            #expect(seen.first.map { $0.completedUnitCount >= resumeData.offset || $0.completedUnitCount == 0 } == true)
            #expect(seen.last?.completedUnitCount == Int64(total))
        }
    }

    @Test("cancelling the Swift task awaiting a download cancels it; it completes once and leaves the manager")
    func cancellingTheAwaitingTaskCancelsTheDownload() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let completions = Counter()
            manager.setTaskDidCompleteBlock { _, _ in completions.add(1) }
            let download = manager.download(URLRequest(url: server.sessionURL("/range/102400?duration=20&chunk_size=1024")))
            let waiting = Task { try await download.value }
            try await eventually { download.task.countOfBytesReceived > 0 }
            waiting.cancel()
            do {
                _ = try await waiting.value
                Issue.record("a cancelled download succeeded")
            } catch CourierError.cancelled {
            }
            try await eventually { manager.tasks.isEmpty }
            try await eventually { ClientSocketProbe.sockets(toPort: server.port) == 0 }
            #expect(completions.value == 1)
            #expect(download.task.state == .completed)
        }
    }
}
