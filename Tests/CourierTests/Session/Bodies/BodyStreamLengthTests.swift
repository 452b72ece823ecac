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
    /// A manager answering raw bytes, and a POST to /anything whose body is the stream of
    /// "payload" (7 bytes) with `contentLength` as its `Content-Length` field.
    static func streamPost(to server: TestServer, contentLength: String) -> (URLSessionManager, URLRequest) {
        let manager = URLSessionManager()
        manager.responseSerializer = HTTPResponseSerializer()
        var request = URLRequest(url: server.baseURL.appendingPathComponent("anything"))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("payload".utf8))
        request.setValue(contentLength, forHTTPHeaderField: "Content-Length")
        return (manager, request)
    }

    @Test("a negative Content-Length on a body stream fails before the request is sent")
    func aNegativeContentLengthIsRefused() async throws {
        try await TestServer.withRunning { server in
            let (manager, request) = Self.streamPost(to: server, contentLength: "-5")
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

    /// Other values a caller may put in `Content-Length` beside a body stream. Not a base-10
    /// Int64 (letters, a space, past Int64.max): the stream goes chunked, whole, and the
    /// caller's field is not sent; `+7` reads as 7. A length the stream doesn't match fails
    /// with invalidBody naming it, whether the stream is longer or shorter.
    @Test("other Content-Length values on a body stream", arguments: ["abc", " 7", "99999999999999999999", "+7", "3", "100"])
    func otherContentLengths(_ value: String) async throws {
        try await TestServer.withRunning { server in
            let (manager, request) = Self.streamPost(to: server, contentLength: value)
            do {
                let (data, response) = try await manager.data(for: request)
                #expect(["abc", " 7", "99999999999999999999", "+7"].contains(value), "\(value) was sent")
                #expect(response.statusCode == 200)
                let object = try JSONSerialization.jsonObject(with: try #require(data as? Data)) as? [String: Any]
                #expect(object?["data"] as? String == "payload", "\(value)")
                let headers = object?["headers"] as? [String: Any]
                if value == "+7" {
                    #expect(headers?["Content-Length"] as? String == "7", "\(String(describing: headers))")
                } else {
                    #expect(headers?["Transfer-Encoding"] as? String == "chunked", "\(String(describing: headers))")
                    #expect(headers?["Content-Length"] == nil, "\(String(describing: headers))")
                }
            } catch {
                guard case .engine(.invalidBody(let reason)) = error as? CourierError else {
                    Issue.record("\(value): expected invalidBody, got \(error)")
                    return
                }
                #expect(["3", "100"].contains(value), "\(value): \(reason)")
                #expect(reason.contains(value), "\(value): \(reason)")
            }
        }
    }
}
