@testable import CourierEngine
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// The pool's idle timer when its close is declined: the pool handed the connection a request
/// between the timer seeing it idle and the pool's state machine deciding (a window of
/// microseconds in a real run, so the connection here is one the machine never leased out and
/// always declines to close). The timer must not stay armed with nobody to fire it: a
/// connection whose park found it armed would never be closed for idleness again.
@Suite("ConnectionPool idle timer")
struct ConnectionPoolIdleTimerTests {
    /// A connection that is idle from its first park on, with the same bookkeeping as the real
    /// ones, counting how often the pool's timer looked at it.
    private final class IdleConnection: IdleTimedConnection {
        let id = ConnectionPoolStateMachine.ConnectionID(raw: 9_999)
        let eventLoop: any EventLoop
        private let idle = Mutex(IdleTimerBookkeeping())
        let timerChecks = Atomic(0)

        init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

        func markIdle() -> Bool { idle.withLock { $0.markIdle() } }
        func idleTimerFired() -> NIODeadline? {
            timerChecks.add(1, ordering: .relaxed)
            return idle.withLock { $0.timerFired() }
        }
        func close() {}
    }

    @Test func aDeclinedCloseLeavesTheConnectionTimedStill() async throws {
        var configuration = EngineConfiguration()
        configuration.connectionIdleTimeout = .milliseconds(20)
        let group = MultiThreadedEventLoopGroup.singleton
        let pool = ConnectionPool(configuration: configuration, factory: try ConnectionFactory(configuration: configuration, group: group))
        let connection = IdleConnection(eventLoop: group.next())

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
}
