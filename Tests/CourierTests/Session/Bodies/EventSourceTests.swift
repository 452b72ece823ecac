import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `EventSource` against the test server's `/sse/{key}` stream: resuming with `Last-Event-ID`,
/// `retry:`, backoff, the ways it stops, and cancellation.
@Suite("event source")
struct EventSourceTests {
    /// What `/sse/{key}/log` says: the `Last-Event-ID` each request sent ("" for none).
    struct Log: Decodable, Sendable {
        let requests: Int
        let last_event_ids: [String]
    }

    /// Reconnects at once, so the tests don't wait for the browsers' default 3 s.
    private static let quick = EventSourceConfiguration(initialReconnectionTime: .zero, maximumReconnectionDelay: .milliseconds(200))

    private func log(_ server: TestServer, _ key: String) async throws -> Log {
        try await HTTPSessionManager(baseURL: server.baseURL).get("sse/\(key)/log", as: Log.self).value
    }

    private func collect(_ source: EventSource) async throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for try await event in source { events.append(event) }
        return events
    }

    private func expected(_ numbers: ClosedRange<Int>) -> [ServerSentEvent] {
        numbers.map { ServerSentEvent(data: "event \($0)", id: String($0)) }
    }

    @Test("after each normal end it reconnects with Last-Event-ID and the server goes on from there; 204 ends the sequence")
    func resumesAfterNormalEnd() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource("sse/end", parameters: ["count": 6, "per": 2], configuration: Self.quick)
            #expect(try await collect(source) == expected(1...6))
            #expect(source.lastEventID == "6")
            #expect(source.reconnections == 3)
            #expect(source.response?.statusCode == 204)
            #expect(try await log(server, "end").last_event_ids == ["", "2", "4", "6"])
        }
    }

    @Test("after a connection is reset mid-event it resumes after the last complete event: none lost, none twice")
    func resumesAfterDrop() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource(
                "sse/drop", parameters: ["count": 6, "per": 2, "end": "drop"], configuration: Self.quick)
            #expect(try await collect(source) == expected(1...6))
            #expect(try await log(server, "drop").last_event_ids == ["", "2", "4", "6"])
        }
    }

    @Test("a Last-Event-ID in the request is where the first connection starts")
    func startsFromGivenID() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            var request = URLRequest(url: server.baseURL.appendingPathComponent("sse/given"))
            request.setValue("3", forHTTPHeaderField: "Last-Event-ID")
            let source = manager.eventSource(for: request, configuration: Self.quick)
            let events = try await collect(source)
            #expect(events == expected(4...5))
            #expect(try await log(server, "given").last_event_ids == ["3", "5"])
        }
    }

    @Test("retry: replaces the reconnection time (an hour here: without retry: 10 the second connection would not come)",
          .timeLimit(.minutes(1)))
    func honoursRetry() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            var configuration = EventSourceConfiguration()
            configuration.initialReconnectionTime = .seconds(3600)
            let source = try manager.eventSource(
                "sse/retry", parameters: ["count": 2, "per": 1, "retry": 10], configuration: configuration)
            #expect(try await collect(source) == expected(1...2))
            #expect(source.reconnectionTime == .milliseconds(10))
            #expect(source.reconnectionDelay == .milliseconds(10))
            #expect(source.reconnections == 2)
        }
    }

    @Test("while the server answers 503 it backs off and tries again, then streams; the failures reset")
    func backsOffWhileUnavailable() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource("sse/busy", parameters: ["count": 2, "fail": 3], configuration: Self.quick)
            #expect(try await collect(source) == expected(1...2))
            #expect(source.consecutiveFailures == 0)
            #expect(try await log(server, "busy").last_event_ids == ["", "", "", "", "2"])
        }
    }

    @Test("429 with Retry-After: 0 is tried again")
    func tooManyRequests() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource(
                "sse/limited", parameters: ["count": 1, "fail": 1, "status": 429, "retry_after": 0], configuration: Self.quick)
            #expect(try await collect(source) == expected(1...1))
            #expect(try await log(server, "limited").requests == 3)
        }
    }

    @Test("past maximumConsecutiveFailures it throws the last 503")
    func givesUp() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            var configuration = Self.quick
            configuration.maximumConsecutiveFailures = 2
            let source = try manager.eventSource("sse/down", parameters: ["fail": 100], configuration: configuration)
            await #expect {
                _ = try await collect(source)
            } throws: { error in
                guard case CourierError.unacceptableStatusCode(let response, _, _) = error else { return false }
                return response.statusCode == 503
            }
            #expect(try await log(server, "down").requests == 3)
        }
    }

    @Test("a refused connection is tried again, then given up with cannotConnect")
    func cannotConnect() async throws {
        let server = try await TestServer.start()
        let url = server.baseURL.appendingPathComponent("sse/gone")
        try await server.shutdown()
        var configuration = Self.quick
        configuration.maximumConsecutiveFailures = 1
        let source = URLSessionManager().eventSource(for: URLRequest(url: url), configuration: configuration)
        await #expect {
            _ = try await collect(source)
        } throws: { error in
            guard case CourierError.cannotConnect = error else { return false }
            return true
        }
        #expect(source.reconnections == 1)
        #expect(source.consecutiveFailures == 2)
    }

    @Test("204 ends the sequence at once, without an error and without reconnecting")
    func noContentEnds() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource("sse/stop", parameters: ["answer": 204], configuration: Self.quick)
            #expect(try await collect(source).isEmpty)
            #expect(source.reconnections == 0)
            #expect(try await log(server, "stop").requests == 1)
        }
    }

    @Test("404 throws unacceptableStatusCode, without reconnecting")
    func notFoundThrows() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource("sse/missing", parameters: ["answer": 404], configuration: Self.quick)
            await #expect {
                _ = try await collect(source)
            } throws: { error in
                guard case CourierError.unacceptableStatusCode(let response, _, _) = error else { return false }
                return response.statusCode == 404
            }
            #expect(try await log(server, "missing").requests == 1)
        }
    }

    @Test("a 200 that is not text/event-stream throws unacceptableContentType, without reconnecting")
    func wrongContentTypeThrows() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource("sse/page", parameters: ["answer": "html"], configuration: Self.quick)
            await #expect {
                _ = try await collect(source)
            } throws: { error in
                guard case CourierError.unacceptableContentType(let type, _, _) = error else { return false }
                return type == "text/html"
            }
            #expect(try await log(server, "page").requests == 1)
        }
    }

    @Test("leaving the loop cancels the request: the server sees its connection close")
    func breakCancels() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource(
                "sse/endless", parameters: ["count": 100_000, "interval": 20], configuration: Self.quick)
            var received = 0
            for try await _ in source {
                received += 1
                if received == 2 { break }
            }
            #expect(received == 2)
            try await eventually { server.connectionsOpen == 0 && manager.tasks.isEmpty }
            #expect(server.connectionsOpen == 0)
        }
    }

    @Test("cancelling the iterating task throws cancelled and closes the connection")
    func taskCancellation() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let source = try manager.eventSource(
                "sse/cancelled", parameters: ["count": 100_000, "interval": 20], configuration: Self.quick)
            let (firstEvent, seen) = AsyncStream<Void>.makeStream()
            let reader = Task {
                for try await _ in source { seen.yield() }
            }
            for await _ in firstEvent { break }
            reader.cancel()
            await #expect {
                try await reader.value
            } throws: { error in
                guard case CourierError.cancelled = error else { return false }
                return true
            }
            try await eventually { server.connectionsOpen == 0 }
        }
    }
}
