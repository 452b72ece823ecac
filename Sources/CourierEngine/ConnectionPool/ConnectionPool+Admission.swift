import NIOCore

/// What the pool needs of a newly opened connection of either protocol to admit it.
protocol PooledConnection: AnyObject, Sendable {
    var id: ConnectionPoolStateMachine.ConnectionID { get }
    var key: ConnectionKey { get }
    var channel: any Channel { get }
    var eventLoop: any EventLoop { get }
}

extension HTTP1Connection: PooledConnection {}
extension HTTP2Connection: PooledConnection {}

/// How a newly opened connection enters the pool, the same for HTTP/1.1 and HTTP/2: it is
/// entered in its protocol's table unless the pool has shut down (then it is closed, and the
/// state machine still hears that it opened, so its counts stay right); then, on the
/// connection's event loop (so a close can't slip between the check and the wiring), a
/// connection whose channel already closed counts as a failed attempt, and a live one is
/// wired and handed to the state machine by `activate`.
extension ConnectionPool {
    func admit<Connection: PooledConnection>(
        _ connection: Connection,
        into table: WritableKeyPath<State, [ConnectionPoolStateMachine.ConnectionID: Connection]>,
        establishedAfterShutdown: (inout State) -> Void,
        activate: @escaping @Sendable () -> Void
    ) {
        let registered: Bool = state.withLock { state in
            if state.machine.isShutDown { return false }
            state[keyPath: table][connection.id] = connection
            return true
        }
        guard registered else {
            connection.channel.close(promise: nil)
            state.withLock { establishedAfterShutdown(&$0) }
            return
        }
        let pool = self
        connection.eventLoop.execute {
            guard connection.channel.isActive else {
                pool.forget(connection.id)
                pool.connectionFailed(
                    key: connection.key,
                    error: .connectionLost("the server closed the connection right after it opened")
                )
                return
            }
            activate()
        }
    }

    /// Drops a connection from whichever table holds it.
    private func forget(_ id: ConnectionPoolStateMachine.ConnectionID) {
        state.withLock { state in
            state.connections[id] = nil
            state.http2Connections[id] = nil
        }
    }
}
