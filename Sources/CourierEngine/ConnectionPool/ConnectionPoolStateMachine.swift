import NIOCore

/// The connection pool's decisions, as pure values: which connection a request gets, when to
/// open, park, reuse or close one, and who waits. ``ConnectionPool`` performs the actions.
///
/// Per key: at most `maximumConnectionsPerHost` connections (open or opening); requests beyond
/// that wait in FIFO order; at most `maximumIdleConnectionsPerHost` stay idle. Idle
/// connections are reused most-recently-used first (warmest socket).
///
/// HTTP/2 side: a key that may speak HTTP/2 (TLS with `h2` offered, or h2c prior knowledge)
/// opens one connection first and waits to learn what it speaks. An HTTP/2 connection carries
/// up to its peer's `SETTINGS_MAX_CONCURRENT_STREAMS` requests at once (each a stream lease);
/// requests beyond that wait in the same FIFO queue. After `GOAWAY` a connection takes no new
/// streams, closes when its last stream ends, and a new one is opened for the queue.
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
        /// What the key's connections speak: unknown until the first one is up (only for keys
        /// that may use HTTP/2; others are HTTP/1.1 from the start).
        var knownProtocol: KnownProtocol = .http1
        /// Open HTTP/2 connections of this key.
        var http2: [ConnectionID: HTTP2State] = [:]

        var openOrOpening: Int { idle.count + leased.count + connecting + http2.count }
        var isEmpty: Bool { openOrOpening == 0 && waiters.isEmpty }

        /// An HTTP/2 connection that takes new streams.
        var hasLiveHTTP2Connection: Bool { http2.values.contains { !$0.goingAway } }

        /// The live HTTP/2 connection with the most free streams, if any has one.
        var http2ConnectionWithFreeStream: ConnectionID? {
            var best: (id: ConnectionID, free: Int)?
            for (id, state) in http2 where !state.goingAway && state.freeStreams > (best?.free ?? 0) {
                best = (id, state.freeStreams)
            }
            return best?.id
        }
    }

    /// What a key's connections are known to speak.
    enum KnownProtocol: Equatable {
        /// May be HTTP/2; the first connection is being opened to find out.
        case unknown
        case http1
        case http2
    }

    /// One HTTP/2 connection's streams.
    struct HTTP2State: Equatable {
        /// The peer's `SETTINGS_MAX_CONCURRENT_STREAMS` (at least 1).
        var maximumStreams: Int
        /// Streams leased to requests now.
        var activeStreams = 0
        /// `GOAWAY` arrived: no new streams.
        var goingAway = false

        var freeStreams: Int { max(0, maximumStreams - activeStreams) }
    }

    /// What to do with an HTTP/2 connection.
    enum HTTP2Action: Equatable {
        case none
        /// Start one stream on the connection for each of these waiters (in order).
        case leaseStreams(ConnectionID, to: [WaiterID])
        /// No stream is open: keep it and arm its idle timer.
        case park(ConnectionID)
        /// Close it (going away and drained, idle too long, or the pool is shut down).
        case close(ConnectionID)
    }

    enum RequestAction: Equatable {
        /// Run the request on this idle connection.
        case lease(ConnectionID)
        /// Run the request as a new stream on this HTTP/2 connection.
        case leaseStream(ConnectionID)
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
        /// Fail all these waiters with the connect error (they all waited for the one
        /// connection that would tell whether the key speaks HTTP/2).
        case failWaiters([WaiterID])
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

    /// A request for `key` wants a connection. `mayUseHTTP2`: the key's connections may speak
    /// HTTP/2 (decided by the engine's configuration; read when the key is first seen).
    mutating func requestConnection(for key: ConnectionKey, waiter: WaiterID, mayUseHTTP2: Bool = false) -> RequestAction {
        guard !isShutDown else { return .failShutDown }
        let limit = maximumConnectionsPerHost
        return withHost(key, creating: HostState(knownProtocol: mayUseHTTP2 ? .unknown : .http1)) { host -> RequestAction in
            if let connection = host.http2ConnectionWithFreeStream {
                host.http2[connection]?.activeStreams += 1
                return .leaseStream(connection)
            }
            if let connection = host.idle.popLast() {
                host.leased.insert(connection)
                return .lease(connection)
            }
            host.waiters.append(waiter)
            if host.knownProtocol != .http1 {
                // One connection at a time until it says what it speaks; an HTTP/2 connection
                // that is merely full makes requests wait for a stream, not a new connection.
                if host.connecting == 0, !host.hasLiveHTTP2Connection {
                    host.connecting += 1
                    return .createConnection(key)
                }
                return .enqueued
            }
            if host.openOrOpening < limit {
                host.connecting += 1
                return .createConnection(key)
            }
            return .enqueued
        }
    }

    /// A queued waiter gave up (cancelled or timed out). Returns whether it was still queued.
    mutating func cancelWaiter(_ waiter: WaiterID, key: ConnectionKey) -> Bool {
        let removed = withHost(key) { host -> Bool in
            guard let index = host.waiters.firstIndex(of: waiter) else { return false }
            host.waiters.remove(at: index)
            return true
        }
        guard removed == true else { return false }
        cleanUp(key)
        return true
    }

    // MARK: - Connections

    mutating func connectionEstablished(_ connection: ConnectionID, key: ConnectionKey) -> ConnectionAction {
        let known: Void? = withHost(key) { host in
            host.connecting -= 1
            host.knownProtocol = .http1
        }
        guard known != nil else { return .close(connection) }
        keys[connection] = key
        if isShutDown {
            keys[connection] = nil
            cleanUp(key)
            return .close(connection)
        }
        return offer(connection, key: key)
    }

    mutating func connectionFailed(key: ConnectionKey) -> FailureAction {
        let limit = maximumConnectionsPerHost
        let shutDown = isShutDown
        let action = withHost(key) { host -> FailureAction in
            host.connecting -= 1
            if host.knownProtocol == .unknown || (host.knownProtocol == .http2 && !host.hasLiveHTTP2Connection && host.connecting == 0) {
                // Everyone waited for this one connection.
                let failed = Array(host.waiters)
                host.waiters.removeAll()
                return failed.isEmpty ? .none : .failWaiters(failed)
            }
            guard let waiter = host.waiters.popFirst() else { return .none }
            var retryKey: ConnectionKey?
            if host.waiters.count > host.connecting, host.openOrOpening < limit, !shutDown {
                host.connecting += 1
                retryKey = key
            }
            return .failWaiter(waiter, retryKey: retryKey)
        }
        guard let action else { return .none }
        cleanUp(key)
        return action
    }

    /// A request finished on `connection`. `reusable`: the exchange ended cleanly and the
    /// connection stays open.
    mutating func releaseConnection(_ connection: ConnectionID, reusable: Bool) -> ConnectionAction {
        guard let key = keys[connection] else { return .none }
        let keep = reusable && !isShutDown
        let idleLimit = maximumIdleConnectionsPerHost
        // One lookup of the key for the release and the offer: this runs after every request.
        return withHost(key) { host -> ConnectionAction in
            host.leased.remove(connection)
            guard keep else { return .close(connection) }
            return Self.offer(connection, to: &host, idleLimit: idleLimit)
        } ?? .none
    }

    /// The connection's channel closed (idle or leased). Returns a key to open a replacement
    /// for when waiters are queued.
    mutating func connectionClosed(_ connection: ConnectionID) -> ConnectionKey? {
        guard let key = keys.removeValue(forKey: connection) else { return nil }
        let limit = maximumConnectionsPerHost
        let shutDown = isShutDown
        let replacement = withHost(key) { host -> ConnectionKey? in
            host.leased.remove(connection)
            host.idle.removeAll { $0 == connection }
            host.http2[connection] = nil
            if host.knownProtocol == .http2 {
                if !shutDown, !host.waiters.isEmpty, host.connecting == 0, !host.hasLiveHTTP2Connection {
                    host.connecting += 1
                    return key
                }
            } else if !shutDown, host.waiters.count > host.connecting, host.openOrOpening < limit {
                host.connecting += 1
                return key
            }
            return nil
        }
        cleanUp(key)
        return replacement ?? nil
    }

    /// Whether `connection` is still the pool's (false once it closed).
    func hasConnection(_ connection: ConnectionID) -> Bool {
        keys[connection] != nil
    }

    /// An idle connection's idle timer fired.
    mutating func idleTimeoutFired(_ connection: ConnectionID) -> ConnectionAction {
        guard let key = keys[connection] else { return .none }
        let action = withHost(key) { host -> ConnectionAction in
            if let state = host.http2[connection] {
                return state.activeStreams == 0 ? .close(connection) : .none
            }
            guard let index = host.idle.firstIndex(of: connection) else { return .none }
            host.idle.remove(at: index)
            return .close(connection)
        }
        return action ?? .none
    }

    mutating func shutdown() -> ShutdownAction {
        isShutDown = true
        var action = ShutdownAction(close: [], fail: [])
        for index in hosts.indices {
            let host = hosts.values[index]
            action.close.append(contentsOf: host.idle)
            action.close.append(contentsOf: host.leased)
            action.close.append(contentsOf: host.http2.keys)
            action.fail.append(contentsOf: host.waiters)
            hosts.values[index].idle.removeAll()
            hosts.values[index].waiters.removeAll()
        }
        return action
    }

    // MARK: - HTTP/2

    /// A new connection for `key` turned out to speak HTTP/2 and allows `maximumStreams`
    /// concurrent streams: queued requests get streams on it.
    mutating func http2ConnectionEstablished(_ connection: ConnectionID, key: ConnectionKey, maximumStreams: Int) -> HTTP2Action {
        let shutDown = isShutDown
        let known: Void? = withHost(key) { host in
            host.connecting -= 1
            host.knownProtocol = .http2
            if !shutDown {
                host.http2[connection] = HTTP2State(maximumStreams: max(1, maximumStreams))
            }
        }
        guard known != nil else { return .close(connection) }
        if shutDown {
            cleanUp(key)
            return .close(connection)
        }
        keys[connection] = key
        return leaseFreeStreams(connection, key: key)
    }

    /// The peer changed `SETTINGS_MAX_CONCURRENT_STREAMS`.
    mutating func http2SettingsChanged(_ connection: ConnectionID, maximumStreams: Int) -> HTTP2Action {
        guard let key = keys[connection] else { return .none }
        let changed = withHost(key) { host -> Bool in
            guard host.http2[connection] != nil else { return false }
            host.http2[connection]?.maximumStreams = max(1, maximumStreams)
            return true
        }
        guard changed == true else { return .none }
        return leaseFreeStreams(connection, key: key)
    }

    /// A stream (request) on an HTTP/2 connection ended, cleanly or not.
    mutating func http2StreamReleased(_ connection: ConnectionID) -> HTTP2Action {
        guard let key = keys[connection] else { return .none }
        let released = withHost(key) { host -> HTTP2State? in
            guard var state = host.http2[connection] else { return nil }
            state.activeStreams = max(0, state.activeStreams - 1)
            host.http2[connection] = state
            return state
        }
        guard let state = released ?? nil else { return .none }
        if isShutDown || state.goingAway {
            return state.activeStreams == 0 ? .close(connection) : .none
        }
        return leaseFreeStreams(connection, key: key)
    }

    /// `GOAWAY` arrived on an HTTP/2 connection: it takes no new streams. Returns what to do
    /// with it, and a key to open a new connection for when requests are queued.
    mutating func http2GoAwayReceived(_ connection: ConnectionID) -> (HTTP2Action, createConnection: ConnectionKey?) {
        guard let key = keys[connection] else { return (.none, nil) }
        let shutDown = isShutDown
        let result = withHost(key) { host -> (HTTP2Action, createConnection: ConnectionKey?)? in
            guard var state = host.http2[connection] else { return nil }
            state.goingAway = true
            host.http2[connection] = state
            var create: ConnectionKey?
            if !shutDown, !host.waiters.isEmpty, host.connecting == 0, !host.hasLiveHTTP2Connection {
                host.connecting += 1
                create = key
            }
            return (state.activeStreams == 0 ? .close(connection) : .none, create)
        }
        return (result ?? nil) ?? (.none, nil)
    }

    /// A stream on an open HTTP/2 connection of `key` for something that does not wait for
    /// one (a WebSocket that would otherwise open its own connection): the live connection
    /// with the most free streams among those `accepts` lets through, leased; nil when none
    /// has a free stream now. Released with ``http2StreamReleased(_:)``.
    mutating func leaseFreeStream(for key: ConnectionKey, where accepts: (ConnectionID) -> Bool) -> ConnectionID? {
        guard !isShutDown else { return nil }
        return withHost(key) { host -> ConnectionID? in
            var best: (id: ConnectionID, free: Int)?
            for (id, state) in host.http2 where !state.goingAway && state.freeStreams > (best?.free ?? 0) && accepts(id) {
                best = (id, state.freeStreams)
            }
            guard let id = best?.id else { return nil }
            host.http2[id]?.activeStreams += 1
            return id
        } ?? nil
    }

    /// After an HTTP/1.1 connection came up for a key that was probing for HTTP/2: how many
    /// more connections to open now for the requests still queued (each counted as opening).
    mutating func additionalHTTP1Connections(for key: ConnectionKey) -> Int {
        guard !isShutDown else { return 0 }
        let limit = maximumConnectionsPerHost
        return withHost(key) { host -> Int in
            guard host.knownProtocol == .http1 else { return 0 }
            let wanted = max(0, host.waiters.count - host.connecting)
            let room = max(0, limit - host.openOrOpening)
            let count = min(wanted, room)
            host.connecting += count
            return count
        } ?? 0
    }

    private mutating func leaseFreeStreams(_ connection: ConnectionID, key: ConnectionKey) -> HTTP2Action {
        withHost(key) { host -> HTTP2Action in
            guard var state = host.http2[connection], !state.goingAway else { return .none }
            var leased: [WaiterID] = []
            while state.freeStreams > 0, let waiter = host.waiters.popFirst() {
                state.activeStreams += 1
                leased.append(waiter)
            }
            host.http2[connection] = state
            if leased.isEmpty {
                return state.activeStreams == 0 ? .park(connection) : .none
            }
            return .leaseStreams(connection, to: leased)
        } ?? .none
    }

    // MARK: - Helpers

    /// Whether `key` has a connection of its own, open or being opened.
    func hasConnection(for key: ConnectionKey) -> Bool {
        (hosts[key]?.openOrOpening ?? 0) > 0
    }

    /// Runs `body` on `key`'s state where it is stored, or returns nil when the key has none.
    /// In place on purpose: a copy taken out of `hosts` and written back shares its
    /// collections' storage with the stored one, so the first change to each (the leased set,
    /// the idle list, the queue) copied it whole, under the pool's lock, on every request.
    private mutating func withHost<Result>(_ key: ConnectionKey, _ body: (inout HostState) -> Result) -> Result? {
        guard let index = hosts.index(forKey: key) else { return nil }
        return body(&hosts.values[index])
    }

    /// Runs `body` on `key`'s state where it is stored, storing `make()` first when the key has
    /// none: one lookup (the defaulting subscript changes the stored value in place too).
    private mutating func withHost<Result>(
        _ key: ConnectionKey,
        creating make: @autoclosure () -> HostState,
        _ body: (inout HostState) -> Result
    ) -> Result {
        body(&hosts[key, default: make()])
    }

    private mutating func offer(_ connection: ConnectionID, key: ConnectionKey) -> ConnectionAction {
        let idleLimit = maximumIdleConnectionsPerHost
        return withHost(key) { Self.offer(connection, to: &$0, idleLimit: idleLimit) } ?? .close(connection)
    }

    /// A free connection goes to the oldest waiter, else idle (up to `idleLimit`), else closes.
    private static func offer(_ connection: ConnectionID, to host: inout HostState, idleLimit: Int) -> ConnectionAction {
        if let waiter = host.waiters.popFirst() {
            host.leased.insert(connection)
            return .lease(connection, to: waiter)
        }
        if host.idle.count >= idleLimit {
            return .close(connection)
        }
        host.idle.append(connection)
        return .park(connection)
    }

    private mutating func cleanUp(_ key: ConnectionKey) {
        if let index = hosts.index(forKey: key), hosts.values[index].isEmpty {
            hosts.remove(at: index)
        }
    }
}
