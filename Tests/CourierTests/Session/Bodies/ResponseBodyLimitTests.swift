import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `SessionConfiguration.maximumResponseBodySize`: data and upload tasks refuse bodies larger
/// than the limit, up front from `Content-Length` or as the bytes arrive.
@Suite("Response body limit")
struct ResponseBodyLimitTests {
    static func manager(limit: Int64?) -> URLSessionManager {
        var configuration = SessionConfiguration()
        configuration.maximumResponseBodySize = limit
        let manager = URLSessionManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        return manager
    }

    /// The limit error's fields, or nil when the error is something else.
    static func tooLarge(_ error: (any Error)?) -> (limit: Int64, contentLength: Int64?, received: Int64)? {
        guard case .responseBodyTooLarge(_, let limit, let contentLength, let received) = error as? CourierError else { return nil }
        return (limit, contentLength, received)
    }

    @Test func theDefaultIs64MiB() {
        #expect(SessionConfiguration().maximumResponseBodySize == 64 << 20)
        #expect(SessionConfiguration.defaultMaximumResponseBodySize == 64 << 20)
    }

    @Test func aContentLengthOverTheLimitFailsBeforeAnyBodyIsRead() async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(limit: 1 << 20)
            let recorder = CompletionRecorder()
            // 1 GiB: the task must fail at the head, not after reading (or buffering) it.
            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/download/1073741824")), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            let error = recorder.first?.error
            let fields = try #require(Self.tooLarge(error), "\(String(describing: error))")
            #expect(fields.limit == 1 << 20)
            #expect(fields.contentLength == 1 << 30)
            #expect((error as? CourierError)?.failingURL == server.sessionURL("/download/1073741824"))
            #expect(task.countOfBytesReceived == 0)
            let message = error.map { "\($0)" } ?? ""
            #expect(message.contains("limit of 1048576 bytes"), "\(message)")
            #expect(message.contains("1073741824 bytes (Content-Length)"), "\(message)")
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.all.count == 1)
        }
    }

    @Test func aChunkedBodyGrowingPastTheLimitFailsAndStopsReading() async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(limit: 20_000)
            let recorder = CompletionRecorder()
            let task = manager.dataTask(
                with: URLRequest(url: server.sessionURL("/stream-bytes/102400?chunk_size=1000")), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            let error = recorder.first?.error
            let fields = try #require(Self.tooLarge(error), "\(String(describing: error))")
            #expect(fields.limit == 20_000)
            #expect(fields.contentLength == nil)
            #expect(fields.received > 20_000)
            // Nothing after the chunk that crossed the limit is gathered.
            #expect(task.countOfBytesReceived == fields.received)
            #expect(task.countOfBytesReceived < 102_400)
            let message = error.map { "\($0)" } ?? ""
            #expect(message.contains("limit of 20000 bytes"), "\(message)")
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.all.count == 1)
        }
    }

    @Test func anUploadTaskIsLimitedToo() async throws {
        try await TestServer.withRunning { server in
            let manager = Self.manager(limit: 100)
            let recorder = CompletionRecorder()
            manager.uploadTask(with: URLRequest(url: server.sessionURL("/anything")), from: Data(count: 1000), completionHandler: recorder.handler)
                .resume()
            await recorder.wait()
            #expect(Self.tooLarge(recorder.first?.error)?.limit == 100)
        }
    }

    @Test func bodiesUpToTheLimitAndDownloadsAndNoLimitPass() async throws {
        try await TestServer.withRunning { server in
            let exact = CompletionRecorder()
            Self.manager(limit: 5000).dataTask(with: URLRequest(url: server.sessionURL("/bytes/5000")), completionHandler: exact.handler).resume()
            await exact.wait()
            #expect(exact.first?.error == nil)
            #expect((exact.first?.object as? Data)?.count == 5000)

            let unlimited = CompletionRecorder()
            Self.manager(limit: nil).dataTask(with: URLRequest(url: server.sessionURL("/bytes/5000")), completionHandler: unlimited.handler).resume()
            await unlimited.wait()
            #expect(unlimited.first?.error == nil)

            let download = CompletionRecorder()
            Self.manager(limit: 10).downloadTask(
                with: URLRequest(url: server.sessionURL("/bytes/5000")),
                completionHandler: { response, url, error in
                    if let url { try? FileManager.default.removeItem(at: url) }
                    download.handler(response, url, error)
                }
            ).resume()
            await download.wait()
            #expect(download.first?.error == nil)
        }
    }
}
