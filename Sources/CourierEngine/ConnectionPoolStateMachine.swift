import NIOCore

/// The connection pool's decisions, as pure values: which connection a request gets, when to
/// open, park, reuse or close one, and who waits. ``ConnectionPool`` performs the actions.
///
/// Per key: at most `maximumConnectionsPerHost` connections (open or opening); requests beyond
/// that wait in FIFO order; at most `maximumIdleConnectionsPerHost` stay idle. Idle
/// connections are reused most-recently-used first (warmest socket).
struct ConnectionPoolStateMachine {
    struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
        let raw: Int
        var description: String { "connection \(raw)" }
    }

    struct WaiterID: Hashable, Sendable {
        let raw: Int
    }

    struct HostState {
        var idle: [ConnectionID] = []
        var leased: Set<ConnectionID> = []
        var connecting = 0
        var waiters = CircularBuffer<WaiterID>()

        var openOrOpening: Int { idle.count + leased.count + connecting }
        var isEmpty: Bool { openOrOpening == 0 && waiters.isEmpty }
    }

    enum RequestAction: Equatable {
        /// Run the request on this idle connection.
        case lease(ConnectionID)
        /// Open a new connection for the key; the waiter is queued until it is up.
        case createConnection(ConnectionKey)
        /// All connections are busy; the waiter is queued.
        case enqueued
        /// The pool is shut down.
        case failShutDown
    }

    enum ConnectionAction: Equatable {
        case none
        /// Give the connection to this waiter.
        case lease(ConnectionID, to: WaiterID)
        /// Keep it idle (and arm its idle timer).
        case park(ConnectionID)
        /// Close it (too many idle, or the pool is shut down).
        case close(ConnectionID)
    }

    enum FailureAction: Equatable {
        /// Fail this waiter with the connect error, and open another connection for the rest
        /// of the queue when `retryKey` is set.
        case failWaiter(WaiterID, retryKey: ConnectionKey?)
        case none
    }

    struct ShutdownAction: Equatable {
        var close: [ConnectionID]
        var fail: [WaiterID]
    }

    let maximumConnectionsPerHost: Int
    let maximumIdleConnectionsPerHost: Int
    private(set) var hosts: [ConnectionKey: HostState] = [:]
    private var keys: [ConnectionID: ConnectionKey] = [:]
    private(set) var isShutDown = false
    private var nextConnectionID = 0

    init(maximumConnectionsPerHost: Int, maximumIdleConnectionsPerHost: Int) {
        self.maximumConnectionsPerHost = max(1, maximumConnectionsPerHost)
        self.maximumIdleConnectionsPerHost = max(0, maximumIdleConnectionsPerHost)
    }

    /// A fresh identifier for a connection about to be opened for `key`.
    mutating func makeConnectionID() -> ConnectionID {
        nextConnectionID += 1
        return ConnectionID(raw: nextConnectionID)
    }

    // MARK: - Requests

    mutating func requestConnection(for key: ConnectionKey, waiter: WaiterID) -> RequestAction {
        guard !isShutDown else { return .failShutDown }
        var host = hosts[key, default: HostState()]
        defer { hosts[key] = host }
        if let connection = host.idle.popLast() {
            host.leased.insert(connection)
            return .lease(connection)
        }
        host.waiters.append(waiter)
        if host.openOrOpening < maximumConnectionsPerHost {
            host.connecting += 1
            return .createConnection(key)
        }
        return .enqueued
    }

    /// A queued waiter gave up (cancelled or timed out). Returns whether it was still queued.
    mutating func cancelWaiter(_ waiter: WaiterID, key: ConnectionKey) -> Bool {
        guard var host = hosts[key], let index = host.waiters.firstIndex(of: waiter) else { return false }
        host.waiters.remove(at: index)
        hosts[key] = host
        cleanUp(key)
        return true
    }

    // MARK: - Connections

    mutating func connectionEstablished(_ connection: ConnectionID, key: ConnectionKey) -> ConnectionAction {
        guard var host = hosts[key] else { return .close(connection) }
        host.connecting -= 1
        keys[connection] = key
        hosts[key] = host
        if isShutDown {
            keys[connection] = nil
            cleanUp(key)
            return .close(connection)
        }
        return offer(connection, key: key)
    }

    mutating func connectionFailed(key: ConnectionKey) -> FailureAction {
        guard var host = hosts[key] else { return .none }
        host.connecting -= 1
        guard let waiter = host.waiters.popFirst() else {
            hosts[key] = host
            cleanUp(key)
            return .none
        }
        var retryKey: ConnectionKey?
        if host.waiters.count > host.connecting, host.openOrOpening < maximumConnectionsPerHost, !isShutDown {
            host.connecting += 1
            retryKey = key
        }
        hosts[key] = host
        cleanUp(key)
        return .failWaiter(waiter, retryKey: retryKey)
    }

    /// A request finished on `connection`. `reusable`: the exchange ended cleanly and the
    /// connection stays open.
    mutating func releaseConnection(_ connection: ConnectionID, reusable: Bool) -> ConnectionAction {
        guard let key = keys[connection], var host = hosts[key] else { return .none }
        host.leased.remove(connection)
        hosts[key] = host
        guard reusable, !isShutDown else {
            return .close(connection)
        }
        return offer(connection, key: key)
    }

    /// The connection's channel closed (idle or leased). Returns a key to open a replacement
    /// for when waiters are queued.
    mutating func connectionClosed(_ connection: ConnectionID) -> ConnectionKey? {
        guard let key = keys.removeValue(forKey: connection), var host = hosts[key] else { return nil }
        host.leased.remove(connection)
        host.idle.removeAll { $0 == connection }
        var replacement: ConnectionKey?
        if !isShutDown, host.waiters.count > host.connecting, host.openOrOpening < maximumConnectionsPerHost {
            host.connecting += 1
            replacement = key
        }
        hosts[key] = host
        cleanUp(key)
        return replacement
    }

    /// An idle connection's idle timer fired.
    mutating func idleTimeoutFired(_ connection: ConnectionID) -> ConnectionAction {
        guard let key = keys[connection], var host = hosts[key],
            let index = host.idle.firstIndex(of: connection)
        else { return .none }
        host.idle.remove(at: index)
        hosts[key] = host
        return .close(connection)
    }

    mutating func shutdown() -> ShutdownAction {
        isShutDown = true
        var action = ShutdownAction(close: [], fail: [])
        for (key, var host) in hosts {
            action.close.append(contentsOf: host.idle)
            action.close.append(contentsOf: host.leased)
            action.fail.append(contentsOf: host.waiters)
            host.idle.removeAll()
            host.waiters.removeAll()
            hosts[key] = host
        }
        return action
    }

    // MARK: - Helpers

    private mutating func offer(_ connection: ConnectionID, key: ConnectionKey) -> ConnectionAction {
        guard var host = hosts[key] else { return .close(connection) }
        defer {
            hosts[key] = host
        }
        if let waiter = host.waiters.popFirst() {
            host.leased.insert(connection)
            return .lease(connection, to: waiter)
        }
        if host.idle.count >= maximumIdleConnectionsPerHost {
            return .close(connection)
        }
        host.idle.append(connection)
        return .park(connection)
    }

    private mutating func cleanUp(_ key: ConnectionKey) {
        if let host = hosts[key], host.isEmpty {
            hosts[key] = nil
        }
    }
}
