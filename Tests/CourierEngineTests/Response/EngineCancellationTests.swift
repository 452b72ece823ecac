import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Synchronization
import Testing

/// Cancelling at each phase gives exactly one terminal event, `cancelled`, and frees the
/// connection (closed when mid-exchange).
@Suite("HTTPEngine cancellation")
struct EngineCancellationTests {
    @Test func cancelWhileQueuedForAConnection() async throws {
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = 1
        try await withEngine(engine: configuration) { engine, server in
            let blocker = EventRecorder()
            let blockerTask = engine.execute(EngineRequest(url: server.url("/fault/no-response"))) { blocker.record($0) }
            let queued = EventRecorder()
            let queuedTask = engine.execute(EngineRequest(url: server.url("/get"))) { queued.record($0) }
            try await Task.sleep(for: .milliseconds(100))
            queuedTask.cancel()
            await queued.waitForEnd()
            #expect(queued.failure == .cancelled)
            blockerTask.cancel()
            await blocker.waitForEnd()
            #expect(blocker.failure == .cancelled)
            // The pool still works afterwards.
            #expect(try await engine.collect(EngineRequest(url: server.url("/get"))).head.status == .ok)
            #expect(queued.terminalCount == 1 && blocker.terminalCount == 1)
        }
    }

    @Test func cancelImmediatelyAfterStart() async throws {
        try await withEngine { engine, server in
            let recorder = EventRecorder()
            let task = engine.execute(EngineRequest(url: server.url("/delay/2"))) { recorder.record($0) }
            task.cancel()
            await recorder.waitForEnd()
            #expect(recorder.failure == .cancelled)
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.terminalCount == 1)
        }
    }

    @Test func cancelWhileWaitingForTheHead() async throws {
        try await withEngine { engine, server in
            let recorder = EventRecorder()
            let task = engine.execute(EngineRequest(url: server.url("/fault/no-response"))) { recorder.record($0) }
            // On the wire, not still queued: a request cancelled before its connection is up
            // leaves that new connection idle in the pool (so 200 ms was too short under load).
            #expect(await eventually(within: 120) { server.requestsReceived(forPath: "/fault/no-response") == 1 })
            task.cancel()
            await recorder.waitForEnd()
            #expect(recorder.failure == .cancelled)
            #expect(await eventually { engine.openConnectionCount == 0 })
        }
    }

    @Test func cancelMidBodyThroughSwiftTaskCancellation() async throws {
        try await withEngine { engine, server in
            // 20 bytes over 20 s: the body is still flowing whenever the cancel lands.
            let response = try await engine.stream(EngineRequest(url: server.url("/drip?duration=20&numbytes=20&delay=0")))
            let firstChunk = Mutex(false)
            let consumer = Task {
                do {
                    for try await _ in response.body { firstChunk.withLock { $0 = true } }
                    return EngineError?.none
                } catch {
                    return error as? EngineError
                }
            }
            #expect(await eventually(within: 10) { firstChunk.withLock { $0 } })
            consumer.cancel()
            let error = await consumer.value
            #expect(error == .cancelled)
            #expect(await eventually { engine.openConnectionCount == 0 })
        }
    }

    @Test func cancelDuringUpload() async throws {
        try await withEngine { engine, server in
            let recorder = EventRecorder()
            let body = RequestBody.stream(length: nil) { writer in
                while true {
                    try await writer.write(ByteBuffer(repeating: 0x62, count: 16 * 1024))
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            let task = engine.execute(EngineRequest(method: "POST", url: server.url("/upload"), body: body)) {
                recorder.record($0)
            }
            // Cancel once the upload is demonstrably under way.
            for _ in 0..<100 where !recorder.all.contains(where: { if case .uploadProgress = $0 { true } else { false } }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            task.cancel()
            await recorder.waitForEnd()
            #expect(recorder.failure == .cancelled)
            let progressEvents = recorder.all.filter { if case .uploadProgress = $0 { return true } else { return false } }
            #expect(!progressEvents.isEmpty)
        }
    }

    @Test func pauseStopsReadingAndResumeFinishes() async throws {
        try await withEngine { engine, server in
            let recorder = EventRecorder()
            let size = 64_000_000
            let task = engine.execute(EngineRequest(url: server.url("/download/\(size)"))) { recorder.record($0) }
            // Paused before the body can arrive (a busy machine must not let it all through).
            task.pause()
            func received() -> Int {
                recorder.all.reduce(0) { total, event in
                    if case .bodyPart(let part) = event { return total + part.readableBytes }
                    return total
                }
            }
            // Wait for the head: then the exchange is running and the one read already asked of
            // the socket has landed or is about to.
            let sawHead = await eventually {
                recorder.all.contains { if case .responseHead = $0 { true } else { false } }
            }
            #expect(sawHead)
            try await Task.sleep(for: .milliseconds(300))
            let whilePaused = received()
            try await Task.sleep(for: .milliseconds(700))
            #expect(received() == whilePaused)
            #expect(whilePaused < size)
            task.resume()
            await recorder.waitForEnd()
            #expect(recorder.failure == nil)
            #expect(received() == size)
        }
    }

    @Test func shutdownFailsRunningRequests() async throws {
        let server = try await TestServer.start()
        let engine = try HTTPEngine()
        let recorder = EventRecorder()
        engine.execute(EngineRequest(url: server.url("/fault/no-response"))) { recorder.record($0) }
        try await Task.sleep(for: .milliseconds(200))
        await engine.shutdown()
        await recorder.waitForEnd()
        #expect(recorder.failure == .shutDown)
        let after = await engineError { _ = try await engine.collect(EngineRequest(url: server.url("/get"))) }
        #expect(after == .shutDown)
        try await server.shutdown()
    }
}
