import Courier
import CourierTestServer
import Crypto
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// `URLSessionManager.stream(for:uploading:taskDescription:)`: an `HTTPRequest` whose body
/// streams up from an engine `RequestBody` while the response streams down.
@Suite("HTTPRequest streaming both ways")
struct HTTPTypesStreamingUploadTests {
    private func request(_ method: HTTPRequest.Method, _ server: TestServer, _ path: String) -> HTTPRequest {
        HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1:\(server.port)", path: path)
    }

    @Test("an async sequence of chunks of unknown length goes up chunked; the task carries the description from the start")
    func uploadsAnAsyncSequence() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let described = Mutex<[String?]>([])
            manager.setTaskDidCompleteBlock { task, _ in described.withLock { $0.append(task.taskDescription) } }
            let (chunks, feed) = AsyncStream<Data>.makeStream()
            let pieces = (0..<4).map { Data(repeating: UInt8(97 + $0), count: 30_000 + $0) }
            let call = Task {
                try await manager.stream(
                    for: request(.post, server, "/upload"), uploading: .sequence(chunks, length: nil), taskDescription: "upload-1")
            }
            feed.yield(pieces[0])
            try await eventually { server.requestsReceived(forPath: "/upload") == 1 }
            for piece in pieces.dropFirst() { feed.yield(piece) }
            feed.finish()

            let streamed = try await call.value
            #expect(streamed.status == .ok)
            #expect(streamed.body.task?.taskDescription == "upload-1")
            var body = Data()
            for try await chunk in streamed.body { body.append(chunk) }
            let receipt = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let all = pieces.reduce(Data(), +)
            #expect(receipt["bytes"] as? Int == all.count)
            #expect(receipt["sha256"] as? String == SHA256.hash(data: all).map { String(format: "%02x", $0) }.joined())
            try await eventually { described.withLock { $0 } == ["upload-1"] }
        }
    }

    @Test("no body: a GET streams its response as stream(for:) does")
    func noBody() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let streamed = try await manager.stream(for: request(.get, server, "/stream-bytes/3000?seed=1"), uploading: nil)
            var count = 0
            for try await chunk in streamed.body { count += chunk.count }
            #expect(count == 3000)
            // Without a description the task keeps the manager's tag, as every task does.
            #expect(streamed.body.task?.taskDescription?.hasPrefix("courier.session-manager.") == true)
        }
    }
}
