import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A request's `httpBodyStream` is sent with the length its `Content-Length` field gives. A
/// negative one can't frame a body: the request fails before anything is sent, with a typed
/// error that names it, on both task shapes (it used to go out as `Content-Length: -5`).
@Suite("a body stream's declared length")
struct BodyStreamLengthTests {
    @Test("a negative Content-Length on a body stream fails before the request is sent")
    func aNegativeContentLengthIsRefused() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            for attempt in ["awaited", "block"] {
                var request = URLRequest(url: server.baseURL.appendingPathComponent("anything"))
                request.httpMethod = "POST"
                request.httpBodyStream = InputStream(data: Data("payload".utf8))
                request.setValue("-5", forHTTPHeaderField: "Content-Length")
                let error: (any Error)?
                if attempt == "awaited" {
                    do {
                        _ = try await manager.data(for: request)
                        error = nil
                    } catch let caught {
                        error = caught
                    }
                } else {
                    let recorder = CompletionRecorder()
                    manager.dataTask(with: request, completionHandler: recorder.handler).resume()
                    await recorder.wait()
                    error = recorder.first?.error
                }
                guard case .engine(.invalidBody(let reason)) = error as? CourierError else {
                    Issue.record("\(attempt): expected invalidBody, got \(String(describing: error))")
                    continue
                }
                #expect(reason.contains("negative (-5)"), "\(attempt): \(reason)")
            }
            #expect(server.requestsReceived(forPath: "/anything") == 0)
        }
    }
}
