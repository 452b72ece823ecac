import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// Resumable downloads: resume data from a cancelled task or from a partial file, `Range` /
/// `If-Range`, and what happens when the server does not resume.
@Suite("Download resume")
struct DownloadResumeTests {
    /// The test server's `/range/{n}` body: `abc…z` repeated.
    static func rangeBytes(_ count: Int, from start: Int = 0) -> Data {
        Data((start..<(start + count)).map { UInt8(ascii: "a") + UInt8($0 % 26) })
    }

    static func temporaryFile(_ contents: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-resume-\(UUID().uuidString)")
        try contents.write(to: url)
        return url
    }

    @Test func partialFileIsCompletedWithARangeRequest() async throws {
        try await TestServer.withRunning { server in
            let total = 100_000
            let file = try Self.temporaryFile(Self.rangeBytes(40_000))
            defer { try? FileManager.default.removeItem(at: file) }
            let manager = URLSessionManager()
            let resumedAt = Mutex<(Int64, Int64)?>(nil)
            manager.setDownloadTaskDidResumeBlock { _, offset, expected in resumedAt.withLock { $0 = (offset, expected) } }
            let fractions = Mutex<[Double]>([])
            let recorder = CompletionRecorder()
            let resumeData = DownloadResumeData(request: URLRequest(url: server.sessionURL("/range/\(total)")), partialFileURL: file)
            let task = manager.downloadTask(
                withResumeData: resumeData,
                progress: { progress in fractions.withLock { $0.append(progress.fractionCompleted) } },
                destination: { _, _ in file },
                completionHandler: { response, url, error in recorder.handler(response, url, error) })
            #expect(task.currentRequest?.value(forHTTPHeaderField: "Range") == "bytes=40000-")
            task.resume()
            await recorder.wait()
            let call = try #require(recorder.first)
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 206)
            #expect((call.object as? URL)?.path == file.path)
            #expect(try Data(contentsOf: file) == Self.rangeBytes(total))
            #expect(resumedAt.withLock { $0 }.map { [$0.0, $0.1] } == [40_000, Int64(total)])
            let seen = fractions.withLock { $0 }
            #expect(seen.first.map { abs($0 - 0.4) < 0.001 } == true)
            #expect(seen.last == 1.0)
            #expect(task.countOfBytesReceived == Int64(total))
        }
    }

    @Test func cancelledDownloadResumesToTheSameBytes() async throws {
        try await TestServer.withRunning { server in
            let total = 102_400
            let manager = URLSessionManager()
            let recorder = CompletionRecorder()
            // A slow drip (1 KiB chunks over 20 s) so that the cancel lands mid-body.
            let task = manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/range/\(total)?duration=20&chunk_size=1024")),
                completionHandler: { response, url, error in recorder.handler(response, url, error) })
            task.resume()
            try await eventually { task.countOfBytesReceived > 0 }
            let produced = Mutex<DownloadResumeData??>(nil)
            task.cancel(byProducingResumeData: { data in produced.withLock { $0 = .some(data) } })
            await recorder.wait()
            let cancelError = try #require(recorder.first?.error as? CourierError)
            guard case .cancelled = cancelError else {
                Issue.record("expected cancelled, got \(cancelError)")
                return
            }
            var resumeData = try #require(produced.withLock { $0 } ?? nil)
            #expect(task.resumeData == resumeData)
            #expect(resumeData.validator == "\"range\(total)\"")
            #expect(resumeData.offset > 0 && resumeData.offset < Int64(total))
            defer { try? FileManager.default.removeItem(at: resumeData.partialFileURL) }

            // Survives encoding; the rest comes at full speed from the same resource.
            resumeData = try DownloadResumeData(encoded: resumeData.encoded())
            resumeData.request.url = server.sessionURL("/range/\(total)")
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-resumed-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let second = CompletionRecorder()
            manager.downloadTask(withResumeData: resumeData, destination: { _, _ in destination }) { response, url, error in
                second.handler(response, url, error)
            }.resume()
            await second.wait()
            let call = try #require(second.first)
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 206)
            #expect(try Data(contentsOf: destination) == Self.rangeBytes(total))
        }
    }

    @Test func changedResourceStartsTheFileOver() async throws {
        try await TestServer.withRunning { server in
            let total = 30_000
            // Stale bytes that must not survive, and a validator the server does not match.
            let file = try Self.temporaryFile(Data(repeating: UInt8(ascii: "X"), count: 5_000))
            defer { try? FileManager.default.removeItem(at: file) }
            let manager = URLSessionManager()
            let resumedAt = Mutex<Int64?>(nil)
            manager.setDownloadTaskDidResumeBlock { _, offset, _ in resumedAt.withLock { $0 = offset } }
            let recorder = CompletionRecorder()
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/range/\(total)")), partialFileURL: file, validator: "\"old\"")
            let task = manager.downloadTask(withResumeData: resumeData, destination: { _, _ in file }) { response, url, error in
                recorder.handler(response, url, error)
            }
            #expect(task.currentRequest?.value(forHTTPHeaderField: "If-Range") == "\"old\"")
            task.resume()
            await recorder.wait()
            #expect(recorder.first?.error == nil)
            #expect(recorder.first?.response?.statusCode == 200)
            #expect(try Data(contentsOf: file) == Self.rangeBytes(total))
            #expect(resumedAt.withLock { $0 } == 0)
        }
    }

    @Test func completePartialFileFinishesWithoutTransfer() async throws {
        try await TestServer.withRunning { server in
            let total = 10_000
            let file = try Self.temporaryFile(Self.rangeBytes(total))
            defer { try? FileManager.default.removeItem(at: file) }
            let recorder = CompletionRecorder()
            let resumeData = DownloadResumeData(request: URLRequest(url: server.sessionURL("/range/\(total)")), partialFileURL: file)
            URLSessionManager().downloadTask(withResumeData: resumeData, destination: { _, _ in file }) { response, url, error in
                recorder.handler(response, url, error)
            }.resume()
            await recorder.wait()
            let call = try #require(recorder.first)
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 416)
            #expect((call.object as? URL)?.path == file.path)
            #expect(try Data(contentsOf: file) == Self.rangeBytes(total))
        }
    }

    @Test func garbageIsNotResumeData() {
        #expect(throws: CourierError.self) { try DownloadResumeData(encoded: Data("nope".utf8)) }
    }

    @Test func dataTaskBecomesADownloadTask() async throws {
        try await TestServer.withRunning { server in
            let total = 100_000
            let manager = URLSessionManager()
            manager.setDataTaskDidReceiveResponseBlock { _, _ in .becomeDownload }
            let pair = Mutex<(DataTask, DownloadTask)?>(nil)
            manager.setDataTaskDidBecomeDownloadTaskBlock { data, download in pair.withLock { $0 = (data, download) } }
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-became-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            manager.setDownloadTaskDidFinishDownloadingBlock { _, _ in destination }
            let recorder = CompletionRecorder()
            let dataTask = manager.dataTask(with: URLRequest(url: server.sessionURL("/range/\(total)")), completionHandler: recorder.handler)
            dataTask.resume()
            await recorder.wait()
            let call = try #require(recorder.first)
            #expect(call.error == nil)
            #expect((call.object as? URL)?.path == destination.path)
            #expect(try Data(contentsOf: destination) == Self.rangeBytes(total))
            let (data, download) = try #require(pair.withLock { $0 })
            #expect(data === dataTask)
            #expect(download.taskIdentifier != dataTask.taskIdentifier)
            #expect(download.countOfBytesReceived == Int64(total))
            #expect(download.state == .completed)
            #expect(manager.tasks.isEmpty)
        }
    }
}

/// Progress as an async sequence.
@Suite("Progress updates")
struct ProgressUpdatesTests {
    @Test func downloadProgressStreamIsMonotonicAndEndsAtTheTotal() async throws {
        try await TestServer.withRunning { server in
            let total: Int64 = 100_000
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let recorder = CompletionRecorder()
            let task = manager.dataTask(
                with: URLRequest(url: server.sessionURL("/range/\(total)?duration=1&chunk_size=10000")),
                completionHandler: recorder.handler)
            let updates = task.progressUpdates(.download)
            task.resume()
            var seen: [TransferProgress] = []
            for await progress in updates { seen.append(progress) }
            await recorder.wait()
            #expect(seen.count >= 2)
            #expect(seen.last?.completedUnitCount == total)
            #expect(seen.last?.totalUnitCount == total)
            #expect(seen.last?.fractionCompleted == 1)
            let counts = seen.map(\.completedUnitCount)
            #expect(counts == counts.sorted())
        }
    }

    @Test func uploadProgressStreamReachesTheBodySize() async throws {
        try await TestServer.withRunning { server in
            let size = 3 << 20
            var request = URLRequest(url: server.sessionURL("/upload"))
            request.httpMethod = "POST"
            let recorder = CompletionRecorder()
            let task = URLSessionManager().uploadTask(with: request, from: Data(count: size), completionHandler: recorder.handler)
            let updates = task.progressUpdates(.upload)
            task.resume()
            var last: TransferProgress?
            for await progress in updates { last = progress }
            await recorder.wait()
            #expect(recorder.first?.error == nil)
            #expect(last?.completedUnitCount == Int64(size))
            #expect(last?.totalUnitCount == Int64(size))
        }
    }

    @Test func streamOfAFinishedTaskEndsAtOnce() async throws {
        try await TestServer.withRunning { server in
            let recorder = CompletionRecorder()
            let task = URLSessionManager().dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            var count = 0
            for await _ in task.progressUpdates(.download) { count += 1 }
            #expect(count <= 1)
        }
    }
}
