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
            var request = URLRequest(url: server.baseURL.appendingPathComponent("anything"))
            request.httpMethod = "POST"
            request.httpBodyStream = InputStream(data: Data("payload".utf8))
            request.setValue("-5", forHTTPHeaderField: "Content-Length")
            // Refused before the stream is read: the same request fails the same way twice.
            for (shape, error) in await failuresOnBothTaskShapes(of: request, on: manager) {
                guard case .engine(.invalidBody(let reason)) = error as? CourierError else {
                    Issue.record("\(shape): expected invalidBody, got \(String(describing: error))")
                    continue
                }
                #expect(reason.contains("negative (-5)"), "\(shape): \(reason)")
            }
            #expect(server.requestsReceived(forPath: "/anything") == 0)
        }
    }
}
