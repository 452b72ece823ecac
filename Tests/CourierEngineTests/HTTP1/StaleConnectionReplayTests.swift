@testable import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// A keep-alive connection the server dropped while it sat idle fails the next request
/// written to it before any answer. An idempotent request goes again, once, on a new
/// connection, and its metrics keep the failed attempt; a request that may have been
/// processed (a POST that was written) fails as it did.
@Suite("Replay on a stale connection")
struct StaleConnectionReplayTests {
    /// Every connection answers one request, then closes as the next request arrives
    /// (`ending`: a FIN, or a reset).
    private static func closingOnTheSecondRequest(_ ending: HostileStep) -> HostileScript {
        HostileScript([.readHead, .readBody, .head("200 OK", ["Content-Length: 2"]), .write("ok"), .readHead, ending])
    }

    @Test(arguments: [HostileStep.close, .reset])
    func anIdempotentRequestGoesAgainOnANewConnection(ending: HostileStep) async throws {
        try await HostileServer.withRunning(Self.closingOnTheSecondRequest(ending)) { server in
            let engine = try HTTPEngine()
            defer { Task { await engine.shutdown() } }
            let first = try await engine.collect(EngineRequest(url: server.url("/first")))
            #expect(first.metrics.replayedAttempts.isEmpty)

            let second = try await engine.collect(EngineRequest(url: server.url("/second")))
            #expect(second.head.status == .ok)
            #expect(String(buffer: second.body) == "ok")
            #expect(server.connectionsAccepted == 2, "sent again on a new connection")
            #expect(server.requestHeads.filter { $0.contains("/second") }.count == 2)
            #expect(!second.metrics.isReusedConnection)
            #expect(second.metrics.connectStart != nil)
            let replayed = try #require(second.metrics.replayedAttempts.first)
            #expect(second.metrics.replayedAttempts.count == 1)
            #expect(replayed.isReusedConnection, "the failed attempt rode the stale connection")
            #expect(replayed.requestStart != nil)
            #expect(replayed.responseStart == nil, "no byte of an answer came on it")
            await engine.shutdown()
        }
    }

    @Test func aWrittenPOSTIsNotSentAgain() async throws {
        try await HostileServer.withRunning(Self.closingOnTheSecondRequest(.close)) { server in
            let engine = try HTTPEngine()
            _ = try await engine.collect(EngineRequest(url: server.url("/first")))
            let post = EngineRequest(method: "POST", url: server.url("/order"), body: .bytes(ByteBuffer(string: "buy one")))
            await #expect(throws: EngineError.connectionLost("the server closed the connection before responding")) {
                try await engine.collect(post)
            }
            #expect(server.connectionsAccepted == 1, "the server may have processed it: not sent twice")
            #expect(server.requestHeads.filter { $0.contains("/order") }.count == 1)
            await engine.shutdown()
        }
    }

    @Test func aPOSTMarkedIdempotentIsSentAgain() async throws {
        try await HostileServer.withRunning(Self.closingOnTheSecondRequest(.close)) { server in
            let engine = try HTTPEngine()
            _ = try await engine.collect(EngineRequest(url: server.url("/first")))
            var post = EngineRequest(method: "POST", url: server.url("/order"), body: .bytes(ByteBuffer(string: "buy one")))
            post.headers.add(name: "Idempotency-Key", value: "order-1")
            let response = try await engine.collect(post)
            #expect(String(buffer: response.body) == "ok")
            #expect(response.metrics.replayedAttempts.count == 1)
            await engine.shutdown()
        }
    }
}
