import BenchSupport
import Synchronization

/// The timed part of an echo run. Every socket makes its first round trip untimed (its opening
/// and first message behind it), then waits at the start line until every socket has; the clock
/// and the process's CPU counters start when the last one arrives and stop when the last socket
/// has checked its last echo (before the closes).
final class EchoTiming: Sendable {
    /// Who arrived and left, the waiters at the start line, and the clock and CPU readings.
    private struct State {
        var arrived: Set<Int> = []
        var left: Set<Int> = []
        var waiting: [CheckedContinuation<Void, Never>] = []
        var start: ContinuousClock.Instant?
        var startCPU: Int64 = 0
        var end: ContinuousClock.Instant?
        var endCPU: Int64 = 0
    }

    private let sockets: Int
    private let state = Mutex(State())

    /// A start line for `sockets` sockets.
    init(sockets: Int) {
        self.sockets = sockets
    }

    /// Waits until every socket arrived (or withdrew); the last arrival starts the clock.
    func arrive(_ socket: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let released = state.withLock { state in
                state.waiting.append(continuation)
                state.arrived.insert(socket)
                return Self.releaseIfComplete(&state, sockets: sockets)
            }
            for waiter in released { waiter.resume() }
        }
    }

    /// The socket checked its last echo; the last one stops the clock.
    func leave(_ socket: Int) {
        state.withLock { state in
            state.left.insert(socket)
            Self.stopIfComplete(&state, sockets: sockets)
        }
    }

    /// A socket that failed: it counts as arrived and left so that the others go on.
    func withdraw(_ socket: Int) {
        let released = state.withLock { state in
            state.arrived.insert(socket)
            state.left.insert(socket)
            let released = Self.releaseIfComplete(&state, sockets: sockets)
            Self.stopIfComplete(&state, sockets: sockets)
            return released
        }
        for waiter in released { waiter.resume() }
    }

    /// Wall time and process CPU between the start and the stop; nil when the run never got there.
    var measured: (seconds: Double, cpuMicros: Int64)? {
        state.withLock { state in
            guard let start = state.start, let end = state.end else { return nil }
            return ((end - start).seconds, state.endCPU - state.startCPU)
        }
    }

    private static func releaseIfComplete(_ state: inout State, sockets: Int) -> [CheckedContinuation<Void, Never>] {
        guard state.arrived.count == sockets, state.start == nil else { return [] }
        state.startCPU = ResourceUsage.current().cpuMicros
        state.start = .now
        defer { state.waiting = [] }
        return state.waiting
    }

    private static func stopIfComplete(_ state: inout State, sockets: Int) {
        guard state.left.count == sockets, state.end == nil else { return }
        state.end = .now
        state.endCPU = ResourceUsage.current().cpuMicros
    }
}
