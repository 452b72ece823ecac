@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Testing

/// Streaming response bodies at the session layer: the head as `HTTPResponse` before the body,
/// chunks, lines and server-sent events, and a consumer that stops early cancels the request.
@Suite("async streaming")
struct AsyncStreamingTests {
    @Test("stream(_:) returns the status and fields before the body; breaking out of the loop cancels the request")
    func headBeforeBodyAndEarlyExitCancels() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            // 20 bytes over 20 s: the head comes at once, the body a byte a second.
            let poll = try await manager.stream("drip", parameters: ["duration": 20, "numbytes": 20])
            #expect(poll.status == .ok)
            #expect(poll.headerFields[.contentLength] == "20")
            #expect(poll.url.path == "/drip")
            var received = 0
            for try await chunk in poll.body {
                received += chunk.count
                break  // a long poll the caller is done with
            }
            #expect(received > 0 && received < 20)
            try await eventually { manager.tasks.isEmpty }
            try await eventually { ClientSocketProbe.sockets(toPort: server.port) == 0 }
            #expect(poll.body.task?.state == .completed)
            // The head was handed over as HTTPResponse only: no HTTPURLResponse was made.
            #expect(poll.body.task?.snapshot.withLock { $0.responsesBuilt } == 0)
        }
    }

    @Test("a streamed response dropped without reading its body cancels the request (no paused task left behind)")
    func droppingAnUnreadBodyCancels() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            do {
                let big = try await manager.stream("download/\(64 << 20)")
                #expect(big.status == .ok)
                // Not interested after all: the caller returns without iterating.
            }
            do {
                let (response, _) = try await manager.bytes(for: URLRequest(url: server.sessionURL("/download/\(64 << 20)")))
                #expect(response.statusCode == 200)
            }
            try await eventually { manager.tasks.isEmpty }
            try await eventually { ClientSocketProbe.sockets(toPort: server.port) == 0 }
        }
    }

    @Test("lines: /stream/5's JSON lines, one per element")
    func jsonLines() async throws {
        struct Line: Decodable { let id: Int; let url: String }
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let feed = try await manager.stream("stream/5")
            var ids: [Int] = []
            for try await line in feed.body.lines where !line.isEmpty {
                ids.append(try JSONDecoder().decode(Line.self, from: Data(line.utf8)).id)
            }
            #expect(ids == [0, 1, 2, 3, 4])
        }
    }

    @Test("events: a text/event-stream body becomes ServerSentEvent values; an unterminated last event is dropped")
    func serverSentEvents() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let text = ": hello\nevent: greeting\ndata: hello\ndata: world\nid: 7\n\ndata: second\r\n\r\nretry: 1500\ndata:third\n\ndata: dangling"
            let encoded = Data(text.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let feed = try await manager.stream("base64/\(encoded)")
            var events: [ServerSentEvent] = []
            for try await event in feed.body.events { events.append(event) }
            #expect(events == [
                ServerSentEvent(event: "greeting", data: "hello\nworld", id: "7"),
                ServerSentEvent(data: "second", id: "7"),
                ServerSentEvent(data: "third", id: "7", retry: 1500),
            ])
        }
    }

    @Test("a line longer than the limit fails the iteration with responseBodyTooLarge and cancels the request")
    func overlongLineIsRefused() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let feed = try await manager.stream("drip", parameters: ["duration": 0, "numbytes": 50_000])
            do {
                for try await _ in feed.body.lines(maximumLineLength: 1_000) {}
                Issue.record("a 50,000-byte line was accepted")
            } catch CourierError.responseBodyTooLarge(_, let limit, _, let received) {
                #expect(limit == 1_000)
                #expect(received == 1_001)
            }
            try await eventually { manager.tasks.isEmpty }
        }
    }

    @Test("an event whose data lines never end (no blank line) fails with responseBodyTooLarge instead of growing without bound")
    func endlessEventIsRefused() async throws {
        // 200 lines of 8 KiB, each well under the 1 MiB line limit, together 1.6 MiB of one event.
        let line = "data: " + String(repeating: "x", count: 8_192) + "\n"
        let body = String(repeating: line, count: 200)
        let server = try await HostileServer.start(.answer(headers: ["Content-Type: text/event-stream", "Content-Length: \(body.utf8.count)"], body: body))
        let manager = HTTPSessionManager(baseURL: server.url("/"))
        let feed = try await manager.stream("events")
        do {
            for try await _ in feed.body.events {}
            Issue.record("an endless event was gathered whole")
        } catch CourierError.responseBodyTooLarge(_, let limit, _, let received) {
            #expect(limit == 1 << 20)
            #expect(received > 1 << 20)
        }
        try await eventually { manager.tasks.isEmpty }
        try await server.shutdown()
    }

    @Test("stream(for: HTTPRequest) takes swift-http-types input")
    func httpRequestInput() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let request = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(server.port)", path: "/anything")
            let echo = try await manager.stream(for: request, body: Data("streamed".utf8))
            #expect(echo.status == .ok)
            var body = Data()
            for try await chunk in echo.body { body.append(chunk) }
            let answer = try JSONSerialization.jsonObject(with: body) as? [String: Any]
            #expect(answer?["method"] as? String == "POST")
            #expect(answer?["data"] as? String == "streamed", "\(String(decoding: body, as: UTF8.self))")
        }
    }
}
