import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import Synchronization
import Testing

/// Bodies on redirects and retries: dropped when the method becomes GET, replayed on 307,
/// made again for streams (need-new-body-stream block, multipart forms).
@Suite("Request body replay")
struct RequestBodyReplayTests {
    static func post(_ url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        return request
    }

    static func helloStream() -> RequestBody {
        .stream(length: 5) { writer in try await writer.write(ByteBuffer(string: "hello")) }
    }

    @Test func postRedirectedWith302BecomesGetWithoutBody() async throws {
        try await TestServer.withRunning { server in
            var request = Self.post(server.sessionURL("/redirect-to?url=/anything&status_code=302"))
            request.httpBody = Data("payload".utf8)
            let recorder = CompletionRecorder()
            URLSessionManager().dataTask(with: request, completionHandler: recorder.handler).resume()
            await recorder.wait()
            let json = try #require(recorder.first?.object as? JSONValue)
            #expect(json["method"] == "GET")
            #expect(json["data"] == "")
        }
    }

    @Test func redirect307ResendsADataBody() async throws {
        try await TestServer.withRunning { server in
            var request = Self.post(server.sessionURL("/redirect-to?url=/anything&status_code=307"))
            request.httpBody = Data("payload".utf8)
            let recorder = CompletionRecorder()
            URLSessionManager().dataTask(with: request, completionHandler: recorder.handler).resume()
            await recorder.wait()
            let json = try #require(recorder.first?.object as? JSONValue)
            #expect(json["method"] == "POST")
            #expect(json["data"] == "payload")
        }
    }

    @Test func streamedBodyWithoutANewStreamFailsClearly() async throws {
        try await TestServer.withRunning { server in
            let recorder = CompletionRecorder()
            URLSessionManager().uploadTask(
                withStreamedRequest: Self.post(server.sessionURL("/redirect-to?url=/anything&status_code=307")),
                body: Self.helloStream(), completionHandler: recorder.handler
            ).resume()
            await recorder.wait()
            let error = try #require(recorder.first?.error as? CourierError)
            guard case .requestBodyNotReplayable(let url) = error else {
                Issue.record("expected requestBodyNotReplayable, got \(error)")
                return
            }
            #expect(url?.path == "/anything")
        }
    }

    @Test func needNewBodyStreamBlockProvidesTheBodyAgain() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let asked = Mutex(0)
            manager.setTaskNeedNewBodyStreamBlock { _ in
                asked.withLock { $0 += 1 }
                return Self.helloStream()
            }
            let recorder = CompletionRecorder()
            manager.uploadTask(
                withStreamedRequest: Self.post(server.sessionURL("/redirect-to?url=/anything&status_code=308")),
                body: Self.helloStream(), completionHandler: recorder.handler
            ).resume()
            await recorder.wait()
            let json = try #require(recorder.first?.object as? JSONValue)
            #expect(json["data"] == "hello")
            #expect(asked.withLock { $0 } == 1)
        }
    }

    @Test func multipartPostFollows307WithTheWholeForm() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let result = Mutex<JSONValue?>(nil)
            let recorder = CompletionRecorder()
            manager.post(
                "/redirect-to?url=/post&status_code=307", parameters: ["name": "ada"], headers: nil,
                constructingBody: { form in form.appendPart(fileData: Data("file body".utf8), name: "file", fileName: "a.txt", mimeType: "text/plain") },
                progress: nil,
                success: { _, object in
                    result.withLock { $0 = object as? JSONValue }
                    recorder.handler(nil, object, nil)
                },
                failure: { _, error in recorder.handler(nil, nil, error) })
            await recorder.wait()
            #expect(recorder.first?.error == nil)
            let json = try #require(result.withLock { $0 })
            #expect(json["form"]?["name"] == "ada")
            #expect(json["files"]?["file"] == "file body")
        }
    }
}
