@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// ``DirectTaskRunner`` waits for each hop on an unchecked continuation: every path that ends
/// a hop (the engine refusing the request before any I/O, on the first hop or after a
/// redirect; a Swift task cancelled before the call) must resume it exactly once, so the call
/// returns and the task leaves the manager's list.
@Suite("direct task runner: every call ends once")
struct DirectTaskRunnerEndTests {
    /// The error the call threw, or nil when it succeeded.
    private static func error(of call: () async throws -> Void) async -> (any Error)? {
        do {
            try await call()
            return nil
        } catch {
            return error
        }
    }

    @Test("a request the engine refuses before any I/O ends the call with an error: alone, 32 at once, and on a redirect's hop")
    func refusedBeforeAnyIO() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            var request = URLRequest(url: server.baseURL.appendingPathComponent("get"))
            request.httpMethod = "BAD METHOD"  // not a token: the engine refuses it before connecting
            let badMethod = request
            for _ in 0..<20 {
                #expect(await Self.error { _ = try await manager.runKeepingEngineHead(badMethod) } != nil)
            }
            let failures = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<32 {
                    group.addTask { await Self.error { _ = try await manager.runKeepingEngineHead(badMethod) } != nil }
                }
                var failures = 0
                for await failed in group where failed { failures += 1 }
                return failures
            }
            #expect(failures == 32)
            #expect(server.requestsReceived(forPath: "/get") == 0)

            // The second hop's URL has a port the engine refuses (the redirect itself is followed).
            var components = URLComponents(url: server.baseURL.appendingPathComponent("redirect-to"), resolvingAgainstBaseURL: false)
            components?.queryItems = [URLQueryItem(name: "url", value: "http://127.0.0.1:99999/get")]
            let redirect = URLRequest(url: try #require(components?.url))
            for _ in 0..<10 {
                let error = await Self.error { _ = try await manager.runKeepingEngineHead(redirect) }
                #expect(error.map { "\($0)".contains("99999") } == true, "the second hop's refusal: \(String(describing: error))")
            }
            #expect(server.requestsReceived(forPath: "/redirect-to") == 10)
            try await eventually { manager.tasks.isEmpty }
        }
    }

    @Test("a Swift task cancelled before the call: the call ends cancelled, once, and the task leaves the list")
    func cancelledBeforeTheCall() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let request = URLRequest(url: server.baseURL.appendingPathComponent("fault/no-response"))
            for _ in 0..<20 {
                let call = Task {
                    while !Task.isCancelled { await Task.yield() }
                    return await Self.error { _ = try await manager.runKeepingEngineHead(request) }
                }
                call.cancel()
                let error = await call.value
                guard case .cancelled? = error as? CourierError else {
                    Issue.record("expected cancelled, got \(String(describing: error))")
                    continue
                }
            }
            try await eventually { manager.tasks.isEmpty }
        }
    }
}
