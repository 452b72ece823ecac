import NIOCore
import Synchronization

/// Performs what ``ConnectionPoolStateMachine`` decides: opens connections, hands them to
/// requests, parks them with an idle timer, closes them, and fails waiters on shutdown.
///
/// The decisions happen under one lock; every action (I/O, callbacks) runs after it is released.
final class ConnectionPool: Sendable {
    struct State {
        var machine: ConnectionPoolStateMachine
        var waiters: [ConnectionPoolStateMachine.WaiterID: RequestExecution] = [:]
        var connections: [ConnectionPoolStateMachine.ConnectionID: HTTP1Connection] = [:]
        var http2Connections: [ConnectionPoolStateMachine.ConnectionID: HTTP2Connection] = [:]
        /// Hosts whose requests ride another host's HTTP/2 connection (coalescing), and which.
        var coalesced: [ConnectionKey: ConnectionPoolStateMachine.ConnectionID] = [:]
        /// Hosts a server answered `421 Misdirected Request` for on a coalesced connection.
        var misdirected: Set<ConnectionKey> = []

        /// The request `action` hands its connection to, taken out of `waiters` under the same
        /// lock as the decision (a second lock round per hand-off otherwise, on the path every
        /// queued request takes).
        mutating func takeWaiter(for action: ConnectionPoolStateMachine.ConnectionAction) -> RequestExecution? {
            guard case .lease(_, let id) = action else { return nil }
            return waiters.removeValue(forKey: id)
        }
    }

    let state: Mutex<State>
    let factory: ConnectionFactory
    let configuration: EngineConfiguration
    private let shutdownPromiseLock = Mutex<[CheckedContinuation<Void, Never>]>([])
    /// The last waiter identifier handed out. Atomic rather than under `state`: every request
    /// takes one, from whichever thread starts it, and that lock is the pool's busiest.
    private let lastWaiterID = Atomic<Int>(0)

    init(configuration: EngineConfiguration, factory: ConnectionFactory) {
        self.configuration = configuration
        self.factory = factory
        self.state = Mutex(
            State(
                machine: ConnectionPoolStateMachine(
                    maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
                    maximumIdleConnectionsPerHost: configuration.maximumIdleConnectionsPerHost
                )
            )
        )
    }

    func makeWaiterID() -> ConnectionPoolStateMachine.WaiterID {
        .init(raw: lastWaiterID.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// Open connections (idle or busy), for tests and diagnostics.
    var openConnectionCount: Int {
        state.withLock { $0.connections.count + $0.http2Connections.count }
    }

    // MARK: - Requests

    func submit(_ execution: RequestExecution) {
        if configuration.coalescesHTTP2Connections, coalesce(execution) { return }
        submitToOwnConnection(execution)
    }

    /// Queues `execution` for a connection of its own host (leased, opened, or waited for).
    func submitToOwnConnection(_ execution: RequestExecution) {
        guard execution.markQueued() else { return }
        enum Next {
            case run(HTTP1Connection)
            case runStream(HTTP2Connection)
            case create(ConnectionPoolStateMachine.ConnectionID)
            case wait
            case fail
        }
        let mayUseHTTP2 = factory.mayUseHTTP2(execution.key)
        let next: Next = state.withLock { state in
            switch state.machine.requestConnection(for: execution.key, waiter: execution.waiterID, mayUseHTTP2: mayUseHTTP2) {
            case .lease(let id):
                guard let connection = state.connections[id] else { return .fail }
                return .run(connection)
            case .leaseStream(let id):
                guard let connection = state.http2Connections[id] else { return .fail }
                return .runStream(connection)
            case .createConnection:
                state.waiters[execution.waiterID] = execution
                return .create(state.machine.makeConnectionID())
            case .enqueued:
                state.waiters[execution.waiterID] = execution
                return .wait
            case .failShutDown:
                return .fail
            }
        }
        switch next {
        case .run(let connection):
            run(execution, on: connection)
        case .runStream(let connection):
            connection.execute(execution)
        case .create(let id):
            // On the caller's own event loop when it runs on one of the engine's (a task on
            // `HTTPEngine.taskExecutor`, an event handler): its requests then never change threads.
            // The setup ends by the request's deadline too, and says how far it got.
            let progress = ConnectionSetupProgress()
            execution.waitForConnection(being: progress)
            armDeadline(of: execution)
            openConnection(id: id, key: execution.key, loop: factory.group.any(), requestDeadline: execution.request.deadline, progress: progress)
        case .wait:
            armDeadline(of: execution)
        case .fail:
            execution.finish(.failure(.shutDown), metrics: nil)
        }
    }

    private func run(_ execution: RequestExecution, on connection: HTTP1Connection) {
        guard execution.markRunning(on: connection) else {
            // Cancelled while being handed over: the connection is still clean.
            release(connection, reusable: true)
            return
        }
        connection.execute(execution)
    }

    /// Cancels (or times out) a request wherever it is.
    func abort(_ execution: RequestExecution, with error: EngineError) {
        switch execution.phase {
        case .created:
            execution.finish(.failure(error), metrics: nil)
        case .queued:
            let removed = state.withLock { state in
                let removed = state.machine.cancelWaiter(execution.waiterID, key: execution.key)
                if removed { state.waiters[execution.waiterID] = nil }
                return removed
            }
            if removed {
                execution.finish(.failure(error), metrics: nil)
            } else if case .running(let connection) = execution.phase {
                connection.abort(execution, with: error)
            } else {
                execution.finish(.failure(error), metrics: nil)
            }
        case .running(let connection):
            connection.abort(execution, with: error)
        case .finished:
            break
        }
    }

    func setPaused(_ execution: RequestExecution, reading: Bool?, upload: Bool?) {
        if let connection = execution.setPaused(reading: reading, upload: upload) {
            connection.pauseStateChanged(execution)
        }
    }

    // MARK: - Connections

    /// Opens a connection. `loop`: the event loop it must live on (nil: any of the group's).
    /// `requestDeadline`: the deadline of the request it is opened for; the setup ends by it
    /// when it comes before the connect timeout. `progress` follows the setup's steps.
    func openConnection(
        id: ConnectionPoolStateMachine.ConnectionID, key: ConnectionKey, loop: (any EventLoop)? = nil,
        requestDeadline: NIODeadline? = nil, progress: ConnectionSetupProgress? = nil
    ) {
        let connectDeadline = NIODeadline.now() + configuration.connectTimeout
        let deadline = requestDeadline.map { min($0, connectDeadline) } ?? connectDeadline
        let cutShort = deadline < connectDeadline
        Task {
            do {
                switch try await factory.makeConnection(id: id, key: key, deadline: deadline, loop: loop, progress: progress) {
                case .http1(let connection):
                    connectionEstablished(connection)
                case .http2(let connection):
                    http2ConnectionEstablished(connection)
                }
            } catch let error as EngineError {
                connectionFailed(key: key, error: error, cutShortByADeadline: cutShort)
            } catch {
                connectionFailed(key: key, error: EngineErrorMapping.map(error))
            }
        }
    }

    /// Ends `execution` with ``EngineError/timedOut(_:)`` (`.deadline`) if it is still waiting
    /// for a connection when its deadline comes. (On a connection, the connection's clock check
    /// ends it.) Nothing is scheduled for a request without a deadline.
    private func armDeadline(of execution: RequestExecution) {
        guard let deadline = execution.request.deadline else { return }
        let timer = factory.group.any().scheduleTask(deadline: deadline) { [weak self] in
            guard let self, case .queued = execution.phase else { return }
            self.abort(execution, with: .timedOut(.deadline))
        }
        execution.setWaitTimer(timer)
    }

    private func connectionEstablished(_ connection: HTTP1Connection) {
        let pool = self
        admit(
            connection, into: \.connections,
            establishedAfterShutdown: { _ = $0.machine.connectionEstablished(connection.id, key: connection.key) }
        ) {
            // The handler keeps these after the close: holding the connection weakly breaks
            // the cycle connection -> handler -> callback -> connection, which kept every
            // closed connection, its channel and handlers alive. (While open, the pool's table
            // holds it; a release after the close has nothing to do.)
            let id = connection.id
            connection.installCallbacks(
                onRequestEnded: { [weak connection] reusable in
                    if let connection { pool.release(connection, reusable: reusable) }
                },
                onClosed: { pool.connectionClosed(id: id) },
                onRetry: { execution, replay in pool.retry(execution, replay) }
            )
            let (action, waiter, extra) = pool.state.withLock { state in
                let action = state.machine.connectionEstablished(connection.id, key: connection.key)
                let extra = (0..<state.machine.additionalHTTP1Connections(for: connection.key)).map { _ in
                    state.machine.makeConnectionID()
                }
                return (action, state.takeWaiter(for: action), extra)
            }
            pool.perform(action, waiter: waiter, connection: connection)
            for id in extra {
                pool.openConnection(id: id, key: connection.key)
            }
        }
    }

    /// A connection could not be opened: the state machine says which waiters fail. A waiter
    /// whose own deadline has passed fails with ``EngineError/timedOut(_:)`` (`.deadline`); when
    /// the setup was cut short by the deadline of the request it was opened for, a waiter whose
    /// deadline is still ahead waits again (a new connection is opened for it) instead of
    /// failing with another request's timeout.
    func connectionFailed(key: ConnectionKey, error: EngineError, cutShortByADeadline: Bool = false) {
        let (waiters, retryID): ([RequestExecution], ConnectionPoolStateMachine.ConnectionID?) = state.withLock { state in
            switch state.machine.connectionFailed(key: key) {
            case .failWaiter(let id, let retryKey):
                let waiter = state.waiters.removeValue(forKey: id)
                let retryID = retryKey == nil ? nil : state.machine.makeConnectionID()
                return (waiter.map { [$0] } ?? [], retryID)
            case .failWaiters(let ids):
                return (ids.compactMap { state.waiters.removeValue(forKey: $0) }, nil)
            case .none:
                return ([], nil)
            }
        }
        let now = NIODeadline.now()
        for waiter in waiters {
            if let deadline = waiter.request.deadline, deadline <= now {
                waiter.finish(.failure(.timedOut(.deadline)), metrics: nil)
            } else if cutShortByADeadline, error == .timedOut(.connect) {
                submit(waiter)
            } else {
                waiter.finish(.failure(error), metrics: nil)
            }
        }
        if let retryID {
            openConnection(id: retryID, key: key)
        }
    }

    func release(_ connection: HTTP1Connection, reusable: Bool) {
        let (action, waiter) = state.withLock { state in
            let action = state.machine.releaseConnection(connection.id, reusable: reusable)
            return (action, state.takeWaiter(for: action))
        }
        perform(action, waiter: waiter, connection: connection)
    }

    /// A connection's channel is gone (either protocol): forget it, open a replacement for
    /// queued requests when the state machine says so.
    func connectionClosed(id: ConnectionPoolStateMachine.ConnectionID) {
        let replacement: (ConnectionPoolStateMachine.ConnectionID, ConnectionKey)? = state.withLock { state in
            state.connections[id] = nil
            state.http2Connections[id] = nil
            guard let key = state.machine.connectionClosed(id) else { return nil }
            return (state.machine.makeConnectionID(), key)
        }
        if let replacement {
            openConnection(id: replacement.0, key: replacement.1)
        }
        notifyShutdownWaitersIfDone()
    }

    /// A reused connection died under a request before any answer (the server had closed it
    /// while it was idle): send it once more on another connection when `replay` allows it.
    /// Returns false when it must fail instead.
    private func retry(_ execution: RequestExecution, _ replay: ReplayEligibility) -> Bool {
        guard execution.mayReplay(replay) else { return false }
        submit(execution)
        return true
    }

    /// `waiter`: the request a `.lease` action hands the connection to, already taken out of
    /// `waiters` (``State/takeWaiter(for:)``); nil when it is gone, and the connection is released.
    private func perform(
        _ action: ConnectionPoolStateMachine.ConnectionAction,
        waiter: RequestExecution?,
        connection: HTTP1Connection
    ) {
        switch action {
        case .none:
            break
        case .lease:
            if let waiter {
                run(waiter, on: connection)
            } else {
                release(connection, reusable: true)
            }
        case .park:
            park(connection)
        case .close:
            connection.close()
        }
    }

    // MARK: - Shutdown

    func shutdown() async {
        let (waiters, connections, http2Connections): ([RequestExecution], [HTTP1Connection], [HTTP2Connection]) =
            state.withLock { state in
                let action = state.machine.shutdown()
                let waiters = action.fail.compactMap { state.waiters.removeValue(forKey: $0) }
                return (waiters, Array(state.connections.values), Array(state.http2Connections.values))
            }
        for waiter in waiters {
            waiter.finish(.failure(.shutDown), metrics: nil)
        }
        for connection in connections {
            connection.close()
        }
        for connection in http2Connections {
            connection.close()
        }
        // A connection whose channel is gone already may never say so: one the pool registered
        // after its event loop had shut down (and closed the channel), whose loop dropped the
        // task that wires its close callback. Forgotten now, or this would wait for ever.
        let gone = connections.filter { !$0.channel.isActive }.map(\.id) + http2Connections.filter { !$0.channel.isActive }.map(\.id)
        for id in gone {
            connectionClosed(id: id)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            shutdownPromiseLock.withLock { $0.append(continuation) }
            notifyShutdownWaitersIfDone()
        }
    }

    func notifyShutdownWaitersIfDone() {
        let done = state.withLock { $0.machine.isShutDown && $0.connections.isEmpty && $0.http2Connections.isEmpty }
        guard done else { return }
        let continuations = shutdownPromiseLock.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for continuation in continuations {
            continuation.resume()
        }
    }
}
