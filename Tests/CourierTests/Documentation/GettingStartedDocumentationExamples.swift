import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The examples of the "Getting Started" article (and the README's tour), run against the
/// in-process test server. `server.baseURL` stands for your API's URL.
@Suite("Documentation: Getting Started")
struct GettingStartedDocumentationExamples {
    struct Slideshow: Decodable, Sendable {
        struct Inner: Decodable, Sendable { let title: String }
        let slideshow: Inner
    }

    @Test("a first request in both shapes")
    func firstRequest() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)

            // AFNetworking's shape: the task is resumed for you; the blocks run on the
            // manager's completion queue. JSON arrives as a JSONValue.
            manager.get("get", parameters: ["page": 1], headers: nil, progress: nil,
                        success: { task, object in print(object ?? "nil") },
                        failure: { task, error in print(error) })

            // Swift concurrency: the same task underneath; cancelling the Swift task cancels the request.
            let (object, response) = try await manager.get("get", parameters: ["page": 1])
            print(response.statusCode, (object as? JSONValue)?["args"]?["page"] ?? "none")   // 200 "1"

            try await eventually { server.requestsReceived(forPath: "/get") == 2 }
            #expect(response.statusCode == 200)
            #expect((object as? JSONValue)?["args"]?["page"] == "1")
        }
    }

    @Test("a typed result")
    func typedResult() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            // Decodable: status and content type are checked before decoding.
            let decoded = try await manager.get("json", as: Slideshow.self)
            print(decoded.status, decoded.value.slideshow.title)   // 200 OK Sample Slide Show
            #expect(decoded.status == .ok)
            #expect(decoded.value.slideshow.title == "Sample Slide Show")
        }
    }

    @Test("a failure reads like AFNetworking's")
    func failure() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            do {
                _ = try await manager.get("status/404")
            } catch let error as CourierError {
                print(error.localizedDescription)   // Request failed: not found (404)
            }
            let error = await #expect(throws: CourierError.self) { _ = try await manager.get("status/404") }
            #expect(error?.localizedDescription == "Request failed: not found (404)")
        }
    }
}
