@testable import CourierEngine
import CourierTestServer
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The pool's idle timer when its close is declined: the pool handed the connection a request
/// between the timer seeing it idle and the pool's state machine deciding (a window of
/// microseconds in a real run, so the connection here is one the machine has leased out and
/// keeps leased: it always declines to close). The timer must not stay armed with nobody to
/// fire it: a connection whose park found it armed would never be closed for idleness again.
/// Nor may it watch a connection the pool has forgotten (closed) for ever.
@Suite("ConnectionPool idle timer")
struct ConnectionPoolIdleTimerTests {
    /// A connection that is idle from its first park on, with the same bookkeeping as the real
    /// ones, counting how often the pool's timer looked at it.
    private final class IdleConnection: IdleTimedConnection {
        let id: ConnectionPoolStateMachine.ConnectionID
        let eventLoop: any EventLoop
        private let idle = Mutex(IdleTimerBookkeeping())
        let timerChecks = Atomic(0)

        init(id: ConnectionPoolStateMachine.ConnectionID, eventLoop: any EventLoop) {
            self.id = id
            self.eventLoop = eventLoop
        }

        func markIdle() -> Bool { idle.withLock { $0.markIdle() } }
        func idleTimerFired() -> NIODeadline? {
            timerChecks.add(1, ordering: .relaxed)
            return idle.withLock { $0.timerFired() }
        }
        func close() {}
    }

    /// A pool with a 20 ms idle timeout and `connection`'s id leased out in its state machine
    /// (so it declines the idle close).
    private func poolLeasingAConnection() throws -> (ConnectionPool, IdleConnection) {
        var configuration = EngineConfiguration()
        configuration.connectionIdleTimeout = .milliseconds(20)
        let group = MultiThreadedEventLoopGroup.singleton
        let pool = ConnectionPool(configuration: configuration, factory: try ConnectionFactory(configuration: configuration, group: group))
        let key = ConnectionKey(scheme: .http, host: "127.0.0.1", port: 9)
        let id = pool.state.withLock { state in
            _ = state.machine.requestConnection(for: key, waiter: .init(raw: 1))
            let id = state.machine.makeConnectionID()
            _ = state.machine.connectionEstablished(id, key: key)
            return id
        }
        return (pool, IdleConnection(id: id, eventLoop: group.next()))
    }

    @Test func aDeclinedCloseLeavesTheConnectionTimedStill() async throws {
        let (pool, connection) = try poolLeasingAConnection()
        #expect(pool.state.withLock { $0.machine.idleTimeoutFired(connection.id) } == .none, "leased: declined")

        pool.park(connection)
        // The first fire is declined; the connection, idle all along (parked again meanwhile,
        // which found the timer armed), must be looked at again, not forgotten.
        for _ in 0..<400 where connection.timerChecks.load(ordering: .relaxed) < 1 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(!connection.markIdle(), "the timer is armed while the connection is idle")
        for _ in 0..<400 where connection.timerChecks.load(ordering: .relaxed) < 3 {
            try await Task.sleep(for: .milliseconds(5))
        }
        let checks = connection.timerChecks.load(ordering: .relaxed)
        #expect(checks >= 3, "the idle timer kept watching the idle connection after a declined close")
    }

    /// A connection closed while idle (the server ended it) is gone from the pool: its timer,
    /// armed at its park, fires once and lapses. It must not re-arm for ever, keeping the dead
    /// connection (and its channel) alive and waking the loop every timeout.
    @Test func aClosedConnectionsTimerLapses() async throws {
        let (pool, connection) = try poolLeasingAConnection()
        pool.park(connection)
        pool.connectionClosed(id: connection.id)
        for _ in 0..<400 where connection.timerChecks.load(ordering: .relaxed) < 1 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(connection.timerChecks.load(ordering: .relaxed) >= 1, "the timer armed at the park fired")
        // Fifteen timeouts: a timer that re-armed would look at the connection again and
        // again; one that lapsed is done after its first fire (at most two looks).
        try await Task.sleep(for: .milliseconds(300))
        let checks = connection.timerChecks.load(ordering: .relaxed)
        #expect(checks <= 2, "the idle timer kept firing for a connection the pool has forgotten (\(checks) looks)")
    }

    /// The same on the network: a kept-alive connection the server closes while it sits idle
    /// in the pool is let go once its idle timer has fired (a timer that re-armed for ever
    /// would keep it, its channel and handlers alive).
    @Test func aConnectionTheServerClosedWhileIdleIsLetGo() async throws {
        let server = try await TestServer.start()
        var configuration = EngineConfiguration()
        // Long enough to see it parked and close it under the pool before the timer fires
        // (on a machine too loaded for that, the pool closes it itself and the test proves less).
        // 1 s was not always enough: a clean-clone CI run found the connection gone already
        // right after the first response (the engine suites run side by side on two cores).
        configuration.connectionIdleTimeout = .seconds(3)
        let engine = try HTTPEngine(configuration: configuration)
        _ = try await engine.collect(EngineRequest(url: server.url("/get")))
        weak let pooled = engine.pool.state.withLock { $0.connections.values.first }
        #expect(pooled != nil)
        _ = await eventually {
            pooled == nil || engine.pool.state.withLock { $0.machine.hosts.values.contains { !$0.idle.isEmpty } }
        }
        try await server.shutdown()  // closes the idle connection under the pool
        #expect(await eventually { engine.openConnectionCount == 0 })
        #expect(await eventually { pooled == nil }, "the closed connection is still held (by its idle timer)")
        await engine.shutdown()
    }

    /// The same for an HTTP/2 connection (h2c): closed by the server while idle, it is freed.
    @Test func anHTTP2ConnectionTheServerClosedWhileIdleIsLetGo() async throws {
        let server = try await TestServer.start(.init(http2: .init(cleartext: true)))
        var configuration = EngineConfiguration()
        // 3 s, as the HTTP/1.1 test above: at 1 s a clean-clone CI run found the connection
        // already closed by its own idle timer when the test looked for it in the pool.
        configuration.connectionIdleTimeout = .seconds(3)
        configuration.httpVersion = .http2PriorKnowledge
        let engine = try HTTPEngine(configuration: configuration)
        let response = try await engine.collect(EngineRequest(url: server.url("/get")))
        #expect(response.metrics.networkProtocolName == "h2")
        weak let pooled = engine.pool.state.withLock { $0.http2Connections.values.first }
        #expect(pooled != nil)
        try await server.shutdown()
        #expect(await eventually { engine.openConnectionCount == 0 })
        #expect(await eventually { pooled == nil }, "the closed HTTP/2 connection is still held")
        await engine.shutdown()
    }
}
