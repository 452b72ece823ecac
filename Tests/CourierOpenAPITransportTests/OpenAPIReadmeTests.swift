import Courier
import CourierOpenAPITransport
import CourierTestServer
import Foundation
import OpenAPIRuntime
import Testing

/// The README's OpenAPI example, verbatim between the markers, run against the test server.
@Suite("OpenAPI README")
struct OpenAPIReadmeTests {
    @Test("the README's OpenAPI example runs")
    func readmeExample() async throws {
        try await TestServer.withRunning { server in
            try await example(serverURL: server.baseURL)
        }
    }

    private func example(serverURL: URL) async throws {
        // README begin
        let manager = URLSessionManager()
        let client = Client(serverURL: serverURL, transport: CourierOpenAPITransport(manager: manager))

        // JSON in and out, typed by the document.
        let echo = try await client.echoItem(body: .json(.init(name: "courier", tags: ["swift"]))).ok.body.json
        print(echo.json?.name ?? "-")                                // courier

        // Bodies stream both ways: an upload from an AsyncSequence, a download chunk by chunk.
        let (chunks, feed) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        async let receipt = client.upload(body: .binary(HTTPBody(chunks, length: .unknown)))
        feed.yield(ArraySlice("hello ".utf8)); feed.yield(ArraySlice("world".utf8)); feed.finish()
        print(try await receipt.ok.body.json.bytes)                  // 11
        for try await chunk in try await client.streamBytes(path: .init(n: 4096)).ok.body.binary {
            print(chunk.count)
        }

        // A status the document does not describe is `.undocumented`, not an error.
        if case .undocumented(let status, _) = try await client.status(path: .init(code: 418)) {
            print(status)                                             // 418
        }
        // README end
        #expect(echo.json?.name == "courier")
        #expect(try await receipt.ok.body.json.bytes == 11)
    }
}
