import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// Every fault endpoint ends in the right typed error, within its timeout, and leaves no
/// connection or file descriptor behind.
@Suite("HTTPEngine against misbehaving servers", .serialized)
struct EngineFaultTests {
    private func failure(_ path: String, idleTimeout: TimeAmount = .seconds(2)) async throws -> EngineError? {
        var configuration = EngineConfiguration()
        configuration.idleTimeout = idleTimeout
        let error = try await withEngine(engine: configuration) { engine, server in
            let clock = ContinuousClock()
            let started = clock.now
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: server.url(path))) }
            // A hang check, not a speed check: generous for a loaded 2-core machine.
            #expect(clock.now - started < .seconds(60))
            // The failed connection is closed: no socket to the server is left open.
            #expect(await eventually { openClientSockets(toPort: server.port) == 0 })
            #expect(await eventually { engine.openConnectionCount == 0 })
            return error
        }
        return error
    }

    // Faults that are not timeouts get a 30 s idle timeout: under the full parallel run the 2 s
    // default could fire before the close or the bad bytes were read, and name the wrong error.
    @Test func shortBodyIsConnectionLostNotShortSuccess() async throws {
        let error = try await failure("/fault/short-body?length=1000&sent=500", idleTimeout: .seconds(30))
        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
    }

    @Test func resetMidBodyIsConnectionLost() async throws {
        let error = try await failure("/fault/reset-mid-body?length=100000&sent=1000", idleTimeout: TestTimeouts.amount(seconds: 5))
        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
    }

    @Test func incompleteHeadersTimeOut() async throws {
        #expect(try await failure("/fault/incomplete-headers") == .timedOut(.idle))
    }

    @Test func stalledBodyTimesOut() async throws {
        #expect(try await failure("/fault/stall-body/1000") == .timedOut(.idle))
    }

    @Test func noResponseTimesOut() async throws {
        #expect(try await failure("/fault/no-response") == .timedOut(.idle))
    }

    /// A test server and an engine that keeps to one connection per host.
    private func oneConnectionEngine() async throws -> (TestServer, HTTPEngine) {
        let server = try await TestServer.start()
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = 1
        return (server, try HTTPEngine(configuration: configuration))
    }

    /// What a request to an endpoint that never answers ends with, given a 300 ms idle timeout.
    /// Its 15 s deadline tells "its own check fired" from "an older exchange's check fired late
    /// and judged it" (that would end at the deadline instead).
    private func silentRequestError(_ engine: HTTPEngine, _ server: TestServer) async -> EngineError? {
        await engineError {
            _ = try await engine.collect(
                EngineRequest(url: server.url("/fault/no-response"), idleTimeout: .milliseconds(300), deadline: .now() + .seconds(15)))
        }
    }

    /// The idle check is kept from one exchange to the next on a kept-alive connection: a
    /// request with a short timeout after one with a long timeout still times out on its own
    /// (the check armed for the first must not stand in for it), and a connection idle between
    /// requests is not timed out.
    @Test func eachRequestOnAKeptAliveConnectionGetsItsOwnIdleTimeout() async throws {
        let (server, engine) = try await oneConnectionEngine()
        let first = try await engine.collect(EngineRequest(url: server.url("/get"), idleTimeout: .seconds(60)))
        #expect(first.head.status == .ok)
        try await Task.sleep(for: .milliseconds(400))  // idle between requests: no timeout then
        let second = try await engine.collect(EngineRequest(url: server.url("/get"), idleTimeout: .milliseconds(300)))
        #expect(second.head.status == .ok)
        #expect(await silentRequestError(engine, server) == .timedOut(.idle))
        #expect(server.connectionsAccepted == 1, "the three requests shared one connection")
        await engine.shutdown()
        try await server.shutdown()
    }

    /// The kept idle check and a paused exchange: a response whose reading is paused for
    /// several of its idle timeouts is not timed out (the check re-arms while paused), and the
    /// next request on the same connection, which never answers, still gets its own timeout
    /// (the check the paused one left armed judges the new exchange, not the old).
    @Test func aPausedExchangeIsNotTimedOutAndTheNextOneOnItsConnectionIs() async throws {
        let (server, engine) = try await oneConnectionEngine()
        let recorder = EventRecorder()
        let size = 16_000_000
        // The idle timeout and the pause stretch together under a slow run (the pause stays five
        // idle timeouts long), so the unpaused reading is not judged against 200 ms on a starved loop.
        let idle = TestTimeouts.seconds(0.2)
        let task = engine.execute(EngineRequest(url: server.url("/download/\(size)"), idleTimeout: .milliseconds(Int64(idle * 1_000)))) {
            recorder.record($0)
        }
        task.setReadingPaused(true)
        let sawHead = await eventually { recorder.all.contains { if case .responseHead = $0 { true } else { false } } }
        #expect(sawHead)
        try await Task.sleep(for: .seconds(idle * 5))  // five idle timeouts, paused all along
        #expect(recorder.terminalCount == 0, "a paused response was ended: \(String(describing: recorder.failure))")
        task.setReadingPaused(false)
        await recorder.waitForEnd()
        #expect(recorder.failure == nil)
        #expect(await silentRequestError(engine, server) == .timedOut(.idle))
        #expect(server.connectionsAccepted == 1, "both requests used one connection")
        await engine.shutdown()
        try await server.shutdown()
    }

    @Test func badChunkingIsAProtocolViolation() async throws {
        let error = try await failure("/fault/bad-chunked", idleTimeout: .seconds(30))
        guard case .protocolViolation = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
    }

    @Test func hugeHeaderBlockIsRefused() async throws {
        let error = try await failure("/fault/huge-headers?kib=1024", idleTimeout: .seconds(30))
        guard case .protocolViolation = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
    }

    @Test func closeDelimitedBodyIsReadToTheEnd() async throws {
        try await withEngine { engine, server in
            let response = try await engine.collect(EngineRequest(url: server.url("/fault/close-delimited?bytes=10000")))
            #expect(response.body.readableBytes == 10_000)
            let bytes = Array(response.body.readableBytesView)
            #expect(bytes.enumerated().allSatisfy { $0.element == UInt8(ascii: "a") + UInt8($0.offset % 26) })
        }
    }

    @Test func redirectLoopIsDeliveredAsIsByTheEngine() async throws {
        // Redirects belong to the session layer; the engine returns the 3xx.
        try await withEngine { engine, server in
            let response = try await engine.collect(EngineRequest(url: server.url("/fault/redirect-loop")))
            #expect(response.head.status.code == 302)
        }
    }

    /// The deadline shares the connection's clock check with the idle timeout: a short
    /// deadline after a request with a week-long one (the session's default resource timeout)
    /// on the same connection still ends its own request on time. Checked on a drip that
    /// completes after 5 s: a late check would let it succeed.
    @Test func aShortDeadlineAfterALongOneOnTheSameConnectionStillEndsTheRequest() async throws {
        let (server, engine) = try await oneConnectionEngine()
        let week = EngineRequest(url: server.url("/get"), deadline: .now() + .hours(24 * 7))
        #expect(try await engine.collect(week).head.status == .ok)
        let short = EngineRequest(url: server.url("/drip?duration=5&numbytes=5&delay=0"), deadline: .now() + .milliseconds(300))
        let error = await engineError { _ = try await engine.collect(short) }
        #expect(error == .timedOut(.deadline))
        #expect(server.connectionsAccepted == 1, "both requests used one connection")
        await engine.shutdown()
        try await server.shutdown()
    }

    @Test func deadlineBoundsTheWholeRequest() async throws {
        try await withEngine { engine, server in
            let request = EngineRequest(
                url: server.url("/drip?duration=5&numbytes=5&delay=0"),
                deadline: .now() + .milliseconds(300)
            )
            let error = await engineError { _ = try await engine.collect(request) }
            #expect(error == .timedOut(.deadline))
        }
    }
}
