import CourierEngine
import CourierTestServer
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// `HTTPEngine.taskExecutor`: a task that prefers it runs on one of the engine's event loops,
/// the connections it opens live on that loop, so its requests never change threads.
@Suite struct EngineTaskExecutorTests {
    /// Counts shared with the event closures.
    final class Tally: Sendable {
        let events = Atomic(0)
        let offLoop = Atomic(0)
        let status = Atomic<UInt>(0)
    }

    @Test func requestsFromATaskOnTheExecutorStayOnItsLoop() async throws {
        // Four loops: a connection left to the group would land elsewhere 3 times in 4.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 4)
        let server = try await TestServer.start()
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = 8
        let engine = try HTTPEngine(configuration: configuration, eventLoopGroup: group)
        let loop = engine.taskExecutor.eventLoop
        let url = server.url("/drip?duration=0.2&numbytes=4")

        // Eight requests at once (eight connections, the drip keeps each busy), from the executor.
        let tally = Tally()
        let results = try await withTaskExecutorPreference(engine.taskExecutor) {
            #expect(loop.inEventLoop)
            return try await withThrowingTaskGroup(of: (UInt, Bool).self) { tasks in
                for _ in 0..<8 {
                    tasks.addTask {
                        let status: UInt = try await withCheckedThrowingContinuation { continuation in
                            let head = Tally()
                            engine.execute(EngineRequest(url: url)) { event in
                                tally.events.add(1, ordering: .relaxed)
                                if !loop.inEventLoop { tally.offLoop.add(1, ordering: .relaxed) }
                                switch event {
                                case .responseHead(let response): head.status.store(response.status.code, ordering: .relaxed)
                                case .finished: continuation.resume(returning: head.status.load(ordering: .relaxed))
                                case .failed(let error, _): continuation.resume(throwing: error)
                                default: break
                                }
                            }
                        }
                        // Resumed on the executor again, after the answer arrived.
                        return (status, loop.inEventLoop)
                    }
                }
                var all: [(UInt, Bool)] = []
                for try await result in tasks { all.append(result) }
                return all
            }
        }
        #expect(results.map { $0.0 } == Array(repeating: 200, count: 8))
        #expect(results.allSatisfy { $0.1 }, "the task resumes on the executor's loop")
        #expect(tally.events.load(ordering: .relaxed) > 16)
        #expect(tally.offLoop.load(ordering: .relaxed) == 0, "every event ran on the executor's loop")
        // Counted as the server accepted them: a connection the server has closed again by now
        // (a loaded machine stretches the drip) still had to land on that loop.
        #expect(server.connectionsAccepted >= 2, "several connections, each of which had to land on that loop")

        await engine.shutdown()
        try await server.shutdown()
        try await group.shutdownGracefully()
    }

    /// `operation`'s result, or nil when it has not returned after `seconds` (it is left
    /// running: a bound for a hang, which a task group's cancellation can't give).
    static func bounded<T: Sendable>(seconds: Double, _ operation: @escaping @Sendable () async -> T) async -> T? {
        let once = Tally()
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            Task {
                let value = await operation()
                if once.events.add(1, ordering: .relaxed).newValue == 1 { continuation.resume(returning: value) }
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                if once.events.add(1, ordering: .relaxed).newValue == 1 { continuation.resume(returning: nil) }
            }
        }
    }

    /// The caller's event loop group shut down under running requests (before the engine):
    /// each awaiting caller is resumed, whether its answer is being batched (`ResumeBatch`)
    /// on a loop that is going away or its request never got a connection.
    @Test(arguments: [false, true])
    func aGroupShutDownUnderRunningRequestsEndsThem(h2c: Bool) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let server = try await TestServer.start(h2c ? .init(http2: .init(cleartext: true)) : .init())
        var configuration = EngineConfiguration()
        if h2c { configuration.httpVersion = .http2PriorKnowledge }
        let engine = try HTTPEngine(configuration: configuration, eventLoopGroup: group)
        let url = server.url("/drip?duration=30&numbytes=30")
        let requests = Task {
            await withTaskGroup(of: EngineError?.self) { tasks in
                for _ in 0..<6 {
                    tasks.addTask { await engineError { _ = try await engine.collect(EngineRequest(url: url)) } }
                }
                return await tasks.reduce(into: []) { $0.append($1) }
            }
        }
        // Every request on the wire first: a connection still being set up when its loop dies has
        // its setup task dropped by SwiftNIO, whose unfulfilled promise is a fatal error in debug
        // builds (it took the whole test process down in a full run, 2026-11-25).
        #expect(await eventually(within: 60) { server.requestsReceived >= 6 })
        try await group.shutdownGracefully()
        // Hang bound: the drip alone would take 30 s.
        let ended = await Self.bounded(seconds: 25) { await requests.value }
        // A request can hang here: SwiftNIO drops the work the engine schedules on the dead group
        // (a stream start, a new connection attempt, the timers that would end them), so nothing
        // ever ends that request. The documented contract is to shut the engine down first
        // (HTTPEngine.init). Seen in clean-clone CI runs over HTTP/2 once and over HTTP/1.1 once
        // (a connection attempt still opening when the group went), never in runs of it alone.
        if ended == nil {
            withKnownIssue("an HTTP/2 request whose group shut down under it can hang (NIO drops its work)", isIntermittent: true) {
                Issue.record("requests still waiting after their group shut down")
            }
        } else {
            let errors = try #require(ended, "requests still waiting after their group shut down")
            #expect(errors.count == 6)
            #expect(errors.allSatisfy { $0 != nil })
        }
        // The engine still shuts down, also when a connection finished opening after its loop
        // closed the channel (registered by the pool, never wired: the loop dropped that task).
        let shutDown = await Self.bounded(seconds: 60) { await engine.shutdown() } != nil
        #expect(shutDown, "engine.shutdown() hung after its group shut down")
        try await server.shutdown()
    }

    /// A request submitted from an event loop of *another* group (a server's own loops, say)
    /// must not put its connection there: only the engine's own loops carry its connections.
    @Test func aLoopOfAnotherGroupDoesNotGetTheConnection() async throws {
        let foreign = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let server = try await TestServer.start()
        let engine = try HTTPEngine(eventLoopGroup: group)
        let foreignLoop = foreign.next()
        let tally = Tally()
        let url = server.url("/get")
        let status: UInt = try await withCheckedThrowingContinuation { continuation in
            foreignLoop.execute {
                engine.execute(EngineRequest(url: url)) { event in
                    tally.events.add(1, ordering: .relaxed)
                    if foreignLoop.inEventLoop { tally.offLoop.add(1, ordering: .relaxed) }
                    switch event {
                    case .responseHead(let response): tally.status.store(response.status.code, ordering: .relaxed)
                    case .finished: continuation.resume(returning: tally.status.load(ordering: .relaxed))
                    case .failed(let error, _): continuation.resume(throwing: error)
                    default: break
                    }
                }
            }
        }
        #expect(status == 200)
        #expect(tally.events.load(ordering: .relaxed) >= 2)
        #expect(tally.offLoop.load(ordering: .relaxed) == 0, "no event ran on the foreign group's loop")

        await engine.shutdown()
        try await server.shutdown()
        try await group.shutdownGracefully()
        try await foreign.shutdownGracefully()
    }
}
