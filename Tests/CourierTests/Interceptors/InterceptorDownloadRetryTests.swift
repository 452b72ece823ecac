import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// Downloads go through the same retry decision as data tasks: a retryable status (503) is
/// sent again, the failed attempt's body never reaches the destination, and its temporary file
/// is removed.
@Suite("Interceptors and retry (downloads)")
struct InterceptorDownloadRetryTests {
    static func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-retry-download-\(UUID().uuidString)")
    }

    /// Temporary download files holding exactly `text` (a failed attempt's body left behind).
    static func leftovers(holding text: String) -> [URL] {
        let folder = FileManager.default.temporaryDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let expected = Data(text.utf8)
        return names.filter { $0.hasPrefix("CourierDownload-") }.map { folder.appendingPathComponent($0) }.filter { file in
            // Sized first: other suites' downloads in flight may be large.
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue
            return size == expected.count && (try? Data(contentsOf: file)) == expected
        }
    }

    @Test func aDownloadAnswered503IsRetriedAndOnlyTheLastBodyLands() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let monitor = RetryRecorder()
            manager.addEventMonitor(monitor)
            manager.interceptor = RetryPolicy(exponentialBackoffScale: 0.01)
            let destination = Self.destination()
            defer { try? FileManager.default.removeItem(at: destination) }
            let moves = Mutex<[Int]>([])
            let done = CompletionRecorder()
            let key = "dl503-\(UUID().uuidString)"
            let task = manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/retry/\(key)?fail=2&status=503")),
                destination: { _, response in
                    moves.withLock { $0.append(response.statusCode) }
                    return destination
                },
                completionHandler: done.downloadHandler)
            task.resume()
            await done.wait()
            #expect(done.first?.error == nil)
            #expect(done.first?.response?.statusCode == 200)
            #expect(task.retryCount == 2)
            #expect(server.requestsReceived(forPath: "/retry/\(key)") == 3)
            #expect(monitor.retryDelays.count == 2)
            #expect(moves.withLock { $0 } == [200])  // only the successful attempt's file is moved
            #expect(done.firstFileURL == destination)
            let json = try JSONValue(parsing: try Data(contentsOf: destination))
            #expect(json["attempts"]?.intValue == 3)
            #expect(Self.leftovers(holding: "failing attempt 1 of \(key)").isEmpty)
            #expect(Self.leftovers(holding: "failing attempt 2 of \(key)").isEmpty)
        }
    }

    @Test func anAwaitedDownloadIsRetriedToo() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.interceptor = RetryPolicy(exponentialBackoffScale: 0.01)
            let destination = Self.destination()
            defer { try? FileManager.default.removeItem(at: destination) }
            let key = "dl503a-\(UUID().uuidString)"
            let download = manager.download(URLRequest(url: server.sessionURL("/retry/\(key)?fail=1&status=503")), to: destination)
            let response = try await download.response
            #expect(response.status == .ok)
            #expect(response.value == destination)
            #expect(download.task.retryCount == 1)
            let json = try JSONValue(parsing: try Data(contentsOf: destination))
            #expect(json["attempts"]?.intValue == 2)
        }
    }

    /// Sends retries to another URL (the test server's `/status/503` always fails; `/range`
    /// serves ranges).
    struct RetriesGoTo: RequestInterceptor {
        let url: URL
        func adapt(_ request: URLRequest, for task: SessionTask) async throws -> URLRequest {
            guard task.retryCount > 0 else { return request }
            var request = request
            request.url = url
            return request
        }
    }

    @Test func aResumedDownloadAnswered503IsRetriedAndItsPartialFileKept() async throws {
        try await TestServer.withRunning { server in
            let total = 100_000
            let file = try DownloadResumeTests.temporaryFile(DownloadResumeTests.rangeBytes(40_000))
            defer { try? FileManager.default.removeItem(at: file) }
            let manager = URLSessionManager()
            manager.interceptor = Interceptor([
                RetryPolicy(exponentialBackoffScale: 0.01), RetriesGoTo(url: server.sessionURL("/range/\(total)")),
            ])
            var resumeData = DownloadResumeData(request: URLRequest(url: server.sessionURL("/status/503")), partialFileURL: file)
            resumeData.allowsResumeWithoutValidator = true
            let recorder = CompletionRecorder()
            let task = manager.downloadTask(
                withResumeData: resumeData, destination: { _, _ in file },
                completionHandler: { response, url, error in recorder.handler(response, url, error) })
            task.resume()
            await recorder.wait()
            let call = try #require(recorder.first)
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 206)
            #expect(task.retryCount == 1)
            #expect(server.requestsReceived(forPath: "/status/503") == 1)
            // The 503's body went to a file of its own (removed); the partial file was appended to.
            #expect(try Data(contentsOf: file) == DownloadResumeTests.rangeBytes(total))
        }
    }

    @Test func aDownloadThatIsNotRetriedStillLandsItsBody() async throws {
        // No interceptor: the 503 body is the download (AFNetworking's behaviour), unchanged.
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let destination = Self.destination()
            defer { try? FileManager.default.removeItem(at: destination) }
            let done = CompletionRecorder()
            let key = "dl503n-\(UUID().uuidString)"
            manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/retry/\(key)?fail=1&status=503")),
                destination: { _, _ in destination },
                completionHandler: { response, _, error in done.handler(response, nil, error) }
            ).resume()
            await done.wait()
            #expect(done.first?.response?.statusCode == 503)
            let body = try Data(contentsOf: destination)
            #expect(body == Data("failing attempt 1 of \(key)".utf8))
        }
    }
}
