import NIOCore

/// The pool's HTTP/2 side: performs what ``ConnectionPoolStateMachine``'s HTTP/2 decisions say
/// (streams leased to queued requests, connections parked, drained after `GOAWAY`, closed).
extension ConnectionPool {
    func http2ConnectionEstablished(_ connection: HTTP2Connection) {
        let pool = self
        admit(
            connection, into: \.http2Connections,
            establishedAfterShutdown: {
                _ = $0.machine.http2ConnectionEstablished(connection.id, key: connection.key, maximumStreams: 1)
            }
        ) {
            // The connection keeps these for its life: holding it weakly breaks the cycle
            // connection -> callbacks -> connection that kept every closed one alive. (While
            // open, the pool's table holds it; once it is gone there is nothing left to do.)
            let id = connection.id
            connection.installCallbacks(
                .init(
                    streamEnded: { [weak connection] in
                        if let connection { pool.http2StreamEnded(connection) }
                    },
                    retry: { execution in pool.retryUnprocessed(execution) },
                    settingsChanged: { [weak connection] maximum in
                        guard let connection else { return }
                        let action = pool.state.withLock { $0.machine.http2SettingsChanged(connection.id, maximumStreams: maximum) }
                        pool.perform(action, http2: connection)
                    },
                    goAway: { [weak connection] in
                        if let connection { pool.http2GoAway(connection) }
                    },
                    closed: { pool.connectionClosed(id: id) }
                ))
            let limits = connection.currentLimits
            let action = pool.state.withLock {
                $0.machine.http2ConnectionEstablished(connection.id, key: connection.key, maximumStreams: limits.maximumStreams)
            }
            pool.perform(action, http2: connection)
            if limits.goingAway {
                pool.http2GoAway(connection)
            }
        }
    }

    /// An open HTTP/2 connection for `key` whose server allows extended CONNECT (RFC 8441),
    /// with a stream leased for a WebSocket; nil when there is none with a free stream now.
    /// The stream is released when the one ``HTTP2Connection/openStream(_:)`` opens closes.
    func leaseExtendedConnectStream(for key: ConnectionKey) -> HTTP2Connection? {
        state.withLock { state in
            let connections = state.http2Connections
            let id = state.machine.leaseFreeStream(for: key) { connections[$0]?.extendedConnect.isEnabled == true }
            return id.flatMap { connections[$0] }
        }
    }

    func http2StreamEnded(_ connection: HTTP2Connection) {
        let action = state.withLock { $0.machine.http2StreamReleased(connection.id) }
        perform(action, http2: connection)
    }

    private func http2GoAway(_ connection: HTTP2Connection) {
        let (action, createID): (ConnectionPoolStateMachine.HTTP2Action, ConnectionPoolStateMachine.ConnectionID?) =
            state.withLock { state in
                let (action, create) = state.machine.http2GoAwayReceived(connection.id)
                return (action, create == nil ? nil : state.machine.makeConnectionID())
            }
        perform(action, http2: connection)
        if let createID {
            openConnection(id: createID, key: connection.key)
        }
    }

    /// A request the server never processed: send it again (any method), on whatever
    /// connection the pool gives it. Returns false when it must fail instead.
    private func retryUnprocessed(_ execution: RequestExecution) -> Bool {
        guard execution.mayRetryUnprocessed() else { return false }
        if !execution.mayCoalesce { keepApart(execution.key) }
        submit(execution)
        return true
    }

    private func perform(_ action: ConnectionPoolStateMachine.HTTP2Action, http2 connection: HTTP2Connection) {
        switch action {
        case .none:
            break
        case .leaseStreams(_, let waiterIDs):
            let waiters = state.withLock { state in waiterIDs.map { state.waiters.removeValue(forKey: $0) } }
            for waiter in waiters {
                if let waiter {
                    connection.execute(waiter)
                } else {
                    http2StreamEnded(connection)
                }
            }
        case .park:
            park(connection)
        case .close:
            connection.close()
        }
    }
}
