import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A request whose `httpBodyStream` was already sent (and so read and closed) is sent again:
/// the stream has nothing left to give. That is a caller's mistake, and it must come back as a
/// typed error naming the body stream (the engine's `invalidBody`, as for any body that
/// fails while it is sent), never crash the process (corelibs' `streamError` traps
/// on a stream closed without an error) nor send an empty body silently.
@Suite("a body stream sent twice")
struct ReusedBodyStreamTests {
    @Test("the second send fails with invalidBody naming the closed stream, on both task shapes")
    func aConsumedStreamIsATypedError() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            var request = URLRequest(url: server.baseURL.appendingPathComponent("anything"))
            request.httpMethod = "POST"
            request.httpBodyStream = InputStream(data: Data("payload".utf8))
            request.setValue("7", forHTTPHeaderField: "Content-Length")
            let first = try await manager.data(for: request)
            let body = try #require(first.object as? Data)
            let echo = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            #expect(echo["data"] as? String == "payload")
            for (shape, error) in await failuresOnBothTaskShapes(of: request, on: manager) {
                guard case .engine(.invalidBody(let reason)) = error as? CourierError else {
                    Issue.record("\(shape): expected invalidBody, got \(String(describing: error))")
                    continue
                }
                #expect(reason == "the body stream is closed: a stream is read once (was it sent already?)", "\(shape): \(reason)")
            }
            #expect(server.requestsReceived(forPath: "/anything") >= 1)
        }
    }

    /// A multipart form with an `InputStream` part, redirected with 307 (the body is sent
    /// again, re-read from its parts): the stream part was read and closed by the first send.
    /// The task fails with the engine's `invalidBody` naming the part's stream, said once (its
    /// `InputStream` reading used to trap the same way).
    @Test("a multipart stream part sent again by a 307 fails the task with a typed error")
    func aMultipartStreamPartReplayedIsATypedError() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let recorder = CompletionRecorder()
            let task = manager.post(
                "redirect-to?url=%2Fanything&status_code=307", parameters: nil, headers: nil,
                constructingBody: { form in
                    form.appendPart(
                        inputStream: InputStream(data: Data("stream!".utf8)), name: "s", fileName: "s.bin", length: 7,
                        mimeType: "application/octet-stream")
                }, progress: nil,
                success: recorder.success(), failure: recorder.failure())
            #expect(task != nil)
            await recorder.wait()
            let error = recorder.first?.error
            guard case .engine(.invalidBody(let reason)) = error as? CourierError else {
                Issue.record("expected invalidBody, got \(String(describing: error))")
                return
            }
            // Said once, not wrapped in the session's own error text.
            #expect(reason == "input stream is closed: a stream is read once (was it sent already?)")
        }
    }
}
