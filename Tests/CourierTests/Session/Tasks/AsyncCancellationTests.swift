@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Cancelling the Swift task that awaits any async call cancels the request on the wire (its
/// connection closes), the call throws `cancelled`, and the task completes exactly once.
@Suite("async cancellation")
struct AsyncCancellationTests {
    private func expectCancelled<T: Sendable>(_ waiting: Task<T, any Error>, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            _ = try await waiting.value
            Issue.record("a cancelled call succeeded", sourceLocation: sourceLocation)
        } catch CourierError.cancelled {
        } catch {
            Issue.record("expected cancelled, got \(error)", sourceLocation: sourceLocation)
        }
    }

    /// A manager for `server` and the count of its tasks that completed (for ``cancelAndCheck``).
    private func managerCountingCompletions(_ server: TestServer) -> (HTTPSessionManager, Counter) {
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        let completions = Counter()
        manager.setTaskDidCompleteBlock { _, _ in completions.add(1) }
        return (manager, completions)
    }

    /// Waits until the server has the request's head (so the exchange is on the wire, not
    /// queued for a connection), cancels `waiting`, and checks the aftermath: the connection is
    /// closed (a cancelled exchange can't be reused), the task gone, one completion.
    private func cancelAndCheck<T: Sendable>(
        _ waiting: Task<T, any Error>, path: String, manager: URLSessionManager, server: TestServer, completions: Counter,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await eventually { server.requestsReceived(forPath: path) == 1 }
        waiting.cancel()
        await expectCancelled(waiting, sourceLocation: sourceLocation)
        try await eventually { manager.tasks.isEmpty }
        try await eventually { ClientSocketProbe.sockets(toPort: server.port) == 0 }
        #expect(completions.value == 1, sourceLocation: sourceLocation)
    }

    @Test("get(_:as:) waiting on a server that never answers")
    func typedGet() async throws {
        struct Anything: Decodable, Sendable {}
        try await TestServer.withRunning { server in
            let (manager, completions) = managerCountingCompletions(server)
            let waiting = Task { try await manager.get("fault/no-response", as: Anything.self) }
            try await cancelAndCheck(waiting, path: "/fault/no-response", manager: manager, server: server, completions: completions)
        }
    }

    @Test("an upload's response, awaited while the body is still going")
    func upload() async throws {
        try await TestServer.withRunning { server in
            let (manager, completions) = managerCountingCompletions(server)
            let upload = try manager.upload(Endless(produced: Counter(), chunk: 64 << 10, limit: 1 << 40), to: "upload")
            let waiting = Task { try await upload.response }
            try await cancelAndCheck(waiting, path: "/upload", manager: manager, server: server, completions: completions)
            #expect(upload.task.state == .completed)
            // The result stays: awaiting again gives the same error at once.
            await #expect(throws: CourierError.self) { _ = try await upload.response }
        }
    }

    @Test("stream(_:) waiting for a head that comes in 10 s")
    func streamHead() async throws {
        try await TestServer.withRunning { server in
            let (manager, completions) = managerCountingCompletions(server)
            let waiting = Task { try await manager.stream("delay/10") }
            try await cancelAndCheck(waiting, path: "/delay/10", manager: manager, server: server, completions: completions)
        }
    }
}
