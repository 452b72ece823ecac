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
            var resumeData = DownloadResumeData(request: URLRequest(url: server.sessionURL("/range/\(total)")), partialFileURL: file)
            resumeData.allowsResumeWithoutValidator = true
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
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/range/\(total)")), partialFileURL: file, validator: "\"range\(total)\"")
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

    /// Resumes `file` from `path` with `resumeData`'s settings and waits for the completion.
    static func resume(
        _ resumeData: DownloadResumeData, destination: URL? = nil
    ) async throws -> (call: CompletionRecorder.Call, task: DownloadTask) {
        let recorder = CompletionRecorder()
        let task = URLSessionManager().downloadTask(
            withResumeData: resumeData, destination: { _, _ in destination ?? resumeData.partialFileURL }
        ) { response, url, error in recorder.handler(response, url, error) }
        task.resume()
        await recorder.wait()
        return (try #require(recorder.first), task)
    }

    @Test("a download task made from resume data sends the request's body (a POST stays a POST with its bytes)")
    func resumeDataKeepsTheRequestBody() async throws {
        try await TestServer.withRunning { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-post-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            var request = URLRequest(url: server.sessionURL("/post"))
            request.httpMethod = "POST"
            request.httpBody = Data("a=1&b=two".utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            let (call, _) = try await Self.resume(DownloadResumeData(request: request, partialFileURL: file))
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 200)
            let echoed = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
            #expect(echoed?["form"] as? [String: String] == ["a": "1", "b": "two"])
        }
    }

    @Test("without a validator the download starts over from byte 0 instead of splicing")
    func resumeWithoutValidatorStartsOver() async throws {
        try await TestServer.withRunning { server in
            let total = 30_000
            // Bytes of another version: a plain Range would keep them.
            let file = try Self.temporaryFile(Data(repeating: UInt8(ascii: "X"), count: 5_000))
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(request: URLRequest(url: server.sessionURL("/range/\(total)")), partialFileURL: file)
            let (call, task) = try await Self.resume(resumeData)
            #expect(task.originalRequest?.value(forHTTPHeaderField: "Range") == nil)
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 200)
            #expect(try Data(contentsOf: file) == Self.rangeBytes(total))
        }
    }

    @Test("a validator is sent as If-Range; a changed resource (200) truncates the file and writes from 0")
    func changedETagRestartsFromZero() async throws {
        try await TestServer.withRunning { server in
            let total = 30_000
            let file = try Self.temporaryFile(Data(repeating: UInt8(ascii: "X"), count: 29_000))
            defer { try? FileManager.default.removeItem(at: file) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/range/\(total)?etag=v2")), partialFileURL: file,
                validator: "\"range\(total)\"")
            let (call, task) = try await Self.resume(resumeData)
            #expect(task.originalRequest?.value(forHTTPHeaderField: "If-Range") == "\"range\(total)\"")
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 200)
            #expect(try Data(contentsOf: file) == Self.rangeBytes(total))
        }
    }

    /// Expects `call` to have failed with `invalidResumeResponse` and `file` to hold `contents`.
    static func expectRefused(_ call: CompletionRecorder.Call, file: URL, contents: Data) throws {
        let error = try #require(call.error as? CourierError, "\(String(describing: call.error))")
        guard case .invalidResumeResponse = error else {
            Issue.record("expected invalidResumeResponse, got \(error)")
            return
        }
        #expect(try Data(contentsOf: file) == contents, "the partial file is left as it was")
    }

    /// Resumes `path` from a partial file of `partialCount` bytes with `validator` (and
    /// `totalLength`) and expects the task to fail with `invalidResumeResponse`, the file untouched.
    static func expectResumeRefused(
        _ server: TestServer, path: String, partialCount: Int, validator: String, totalLength: Int64? = nil
    ) async throws {
        let partial = rangeBytes(partialCount)
        let file = try temporaryFile(partial)
        defer { try? FileManager.default.removeItem(at: file) }
        let resumeData = DownloadResumeData(
            request: URLRequest(url: server.sessionURL(path)), partialFileURL: file, validator: validator,
            totalLength: totalLength)
        let (call, _) = try await resume(resumeData)
        try expectRefused(call, file: file, contents: partial)
    }

    @Test("a 206 that does not start at the requested offset fails and leaves the partial file alone")
    func rangeStartingElsewhereIsRefused() async throws {
        try await TestServer.withRunning { server in
            try await Self.expectResumeRefused(
                server, path: "/range/30000?start_shift=100", partialCount: 10_000, validator: "\"range30000\"")
        }
    }

    @Test("Content-Range: bytes N-*/* with Content-Length 2^63-1 is a clear error, not a trap")
    func openEndedRangeWithHugeLengthIsRefused() async throws {
        try await TestServer.withRunning { server in
            try await Self.expectResumeRefused(
                server, path: "/range/5000?lie=open", partialCount: 1_000, validator: "\"range5000\"")
        }
    }

    @Test("a 206 stating another complete length than the known one is refused")
    func changedCompleteLengthIsRefused() async throws {
        try await TestServer.withRunning { server in
            try await Self.expectResumeRefused(
                server, path: "/range/5000?lie=total", partialCount: 1_000, validator: "\"range5000\"",
                totalLength: 5_000)
        }
    }

    @Test("a partial file that is a symbolic link is refused and its target is not written")
    func symbolicLinkPartialFileIsRefused() async throws {
        try await TestServer.withRunning { server in
            let target = try Self.temporaryFile(Data("precious".utf8))
            defer { try? FileManager.default.removeItem(at: target) }
            let link = FileManager.default.temporaryDirectory.appendingPathComponent("courier-link-\(UUID().uuidString)")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            defer { try? FileManager.default.removeItem(at: link) }
            let resumeData = DownloadResumeData(
                request: URLRequest(url: server.sessionURL("/range/5000")), partialFileURL: link, validator: "\"range5000\"")
            let (call, _) = try await Self.resume(resumeData)
            let error = try #require(call.error as? CourierError, "\(String(describing: call.error))")
            guard case .cannotWriteDownloadFile = error else {
                Issue.record("expected cannotWriteDownloadFile, got \(error)")
                return
            }
            #expect(try Data(contentsOf: target) == Data("precious".utf8))
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
        }
    }

    @Test("encoded resume data from outside is checked: partial file path, URL, header fields")
    func encodedResumeDataIsValidated() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-blob-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let elsewhere = folder.appendingPathComponent("elsewhere")
        try Data("x".utf8).write(to: elsewhere)
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)
        func blob(path: String, url: String = "http://127.0.0.1:1/x", headers: String = "{}") -> Data {
            Data(#"{"url":"\#(url)","method":"GET","headers":\#(headers),"partialFilePath":"\#(path)","validator":"\"v\""}"#.utf8)
        }
        // Fine: a missing file in an existing folder, and a regular file.
        #expect(throws: Never.self) { try DownloadResumeData(encoded: blob(path: folder.appendingPathComponent("new").path)) }
        #expect(throws: Never.self) { try DownloadResumeData(encoded: blob(path: elsewhere.path)) }
        let bad: [(String, Data)] = [
            ("a directory", blob(path: folder.path)),
            ("a symbolic link", blob(path: link.path)),
            ("a device", blob(path: "/dev/null")),
            ("a relative path", blob(path: "partial.bin")),
            ("a missing folder", blob(path: folder.appendingPathComponent("no/such/file").path)),
            ("a file URL", blob(path: elsewhere.path, url: "file:///etc/passwd")),
            ("a header with CR LF", blob(path: elsewhere.path, headers: #"{"X-A":"b\r\nX-B: c"}"#)),
            // Found by the resume-data fuzzer: a path ending in "/" names a directory (that need
            // not exist yet); it was accepted, and its encoding no longer decoded to an equal value.
            ("a path ending in a slash", blob(path: folder.appendingPathComponent("new").path + "/")),
        ]
        for (what, data) in bad {
            #expect(throws: CourierError.self, "\(what)") { try DownloadResumeData(encoded: data) }
        }
    }

    @Test("a destination that is a directory is not deleted: the move fails with a clear error")
    func directoryDestinationIsNotDeleted() async throws {
        try await TestServer.withRunning { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dest-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let inside = folder.appendingPathComponent("keep.txt")
            try Data("keep".utf8).write(to: inside)
            let manager = URLSessionManager()
            let recorder = CompletionRecorder()
            let task = manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/range/5000")), destination: { _, _ in folder },
                completionHandler: { response, url, error in recorder.handler(response, url, error) })
            let moveError = Mutex<CourierError?>(nil)
            let observer = NotificationCenter.default.addObserver(
                forName: .courierDownloadTaskDidFailToMoveFile, object: task, queue: nil
            ) { note in
                moveError.withLock { $0 = note.userInfo?[SessionNotificationKey.error] as? CourierError }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            task.resume()
            await recorder.wait()
            #expect(try Data(contentsOf: inside) == Data("keep".utf8), "nothing inside the folder is deleted")
            let error = try #require(moveError.withLock { $0 })
            guard case .cannotMoveDownloadedFile(_, let to, let reason) = error else {
                Issue.record("expected cannotMoveDownloadedFile, got \(error)")
                return
            }
            #expect(to.path == folder.path)
            #expect(reason.contains("is a directory"), "\(reason)")
            if let temporary = recorder.first?.object as? URL { try? FileManager.default.removeItem(at: temporary) }
        }
    }

    @Test("a destination that is a symbolic link is not replaced and its target is untouched; a regular file is replaced")
    func symbolicLinkDestinationIsRefused() async throws {
        try await TestServer.withRunning { server in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dest-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let target = folder.appendingPathComponent("target")
            try Data("target".utf8).write(to: target)
            let link = folder.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            let manager = URLSessionManager()
            for destination in [link, target] {
                let recorder = CompletionRecorder()
                manager.downloadTask(
                    with: URLRequest(url: server.sessionURL("/range/5000")), destination: { _, _ in destination },
                    completionHandler: { response, url, error in recorder.handler(response, url, error) }
                ).resume()
                await recorder.wait()
                let landed = try #require(recorder.first?.object as? URL)
                if destination == link {
                    #expect(landed.path != link.path)
                    #expect(try Data(contentsOf: target) == Data("target".utf8))
                    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
                    try? FileManager.default.removeItem(at: landed)
                } else {
                    #expect(landed.path == target.path)
                    #expect(try Data(contentsOf: target) == Self.rangeBytes(5000))
                }
            }
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
