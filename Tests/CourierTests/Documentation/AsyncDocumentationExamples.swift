import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Testing

/// The swift-http-types examples of the "Async and Typed Responses" article (its longer
/// example is `AsyncReadmeTests`), run against the in-process test server.
@Suite("Documentation: Async and Typed Responses")
struct AsyncDocumentationExamples {
    struct Slideshow: Decodable, Sendable {
        struct Inner: Decodable, Sendable { let title: String }
        let slideshow: Inner
    }

    @Test("HTTPRequest in, HTTPResponse out")
    func httpTypes() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let authority = "127.0.0.1:\(server.port)"
            let request = HTTPRequest(method: .post, scheme: "http", authority: authority, path: "/anything")
            let (data, response) = try await manager.data(for: request, body: Data("hi".utf8))   // (Data, HTTPResponse)
            print(response.status.code, response.headerFields[.contentType] ?? "-", data.count)

            // Decodable with HTTPResponse metadata (status, fields, final URL, metrics).
            let slideshow = try await manager.fetch("json", as: Slideshow.self)
            print(slideshow.status, slideshow.value.slideshow.title)

            #expect(response.status == .ok)
            #expect(response.headerFields[.contentType] == "application/json")
            #expect(slideshow.value.slideshow.title == "Sample Slide Show")
        }
    }

    @Test("cancelling the Swift task cancels the request")
    func cancellation() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let slow = Task { try await manager.get("delay/10") }
            try await Task.sleep(for: .milliseconds(200))
            slow.cancel()                                   // the connection is closed at once
            do {
                _ = try await slow.value
            } catch CourierError.cancelled {
                print("cancelled")
            }
            await #expect(throws: CourierError.self) { _ = try await slow.value }
        }
    }
}
