import NIOCore

/// What the pool's idle timer needs of a connection, HTTP/1.1 or HTTP/2: when it became idle,
/// whether a timer is armed, and how to close it.
protocol IdleTimedConnection: AnyObject, Sendable {
    var id: ConnectionPoolStateMachine.ConnectionID { get }
    var eventLoop: any EventLoop { get }
    /// Marks the connection idle now; returns whether the caller must arm the idle timer.
    func markIdle() -> Bool
    /// The idle timer fired: returns when the connection became idle, or nil if it is busy.
    func idleTimerFired() -> NIODeadline?
    func close()
}

extension HTTP1Connection: IdleTimedConnection {}
extension HTTP2Connection: IdleTimedConnection {}

extension ConnectionPool {
    /// Parks an idle `connection`: arms its idle timer unless one is armed already (one timer
    /// per connection, re-armed only when it fires).
    func park(_ connection: some IdleTimedConnection) {
        if connection.markIdle() {
            armIdleTimer(connection, at: .now() + configuration.connectionIdleTimeout)
        }
    }

    /// Closes `connection` once it has been idle for the configured time, if the state machine
    /// agrees then; while it is busy the timer lapses until the next park.
    private func armIdleTimer(_ connection: some IdleTimedConnection, at deadline: NIODeadline) {
        let timeout = configuration.connectionIdleTimeout
        connection.eventLoop.scheduleTask(deadline: deadline) { [weak self] in
            guard let self, let idleSince = connection.idleTimerFired() else { return }
            let due = idleSince + timeout
            if due <= .now() {
                let (action, known) = self.state.withLock {
                    ($0.machine.idleTimeoutFired(connection.id), $0.machine.hasConnection(connection.id))
                }
                if case .close = action {
                    connection.close()
                } else if known, connection.idleTimerFired() != nil {
                    // Declined: the pool handed the connection a request after it was seen
                    // idle. It is idle again already, and its park found this timer armed and
                    // armed none: this timer covers that idle period, from now. (Busy: the
                    // timer is disarmed now and the next park arms one. Gone from the pool,
                    // closed while idle: the timer lapses, or it would hold the dead
                    // connection and fire every timeout for ever.)
                    self.armIdleTimer(connection, at: .now() + timeout)
                }
            } else {
                self.armIdleTimer(connection, at: due)
            }
        }
    }
}
