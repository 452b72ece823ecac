import NIOCore
import Synchronization

/// An open HTTP/1.1 connection in the pool: its channel and its handler.
///
/// The pool hands it requests from any thread; `execute` hops onto the channel's event loop.
final class HTTP1Connection: Sendable {
    let id: ConnectionPoolStateMachine.ConnectionID
    let key: ConnectionKey
    let channel: any Channel
    private let handler: NIOLoopBound<HTTP1ConnectionHandler>
    private let usage: Mutex<Usage>

    private struct Usage {
        var requestsStarted = 0
        var idle = IdleTimerBookkeeping()
    }

    init(
        id: ConnectionPoolStateMachine.ConnectionID,
        key: ConnectionKey,
        channel: any Channel,
        handler: NIOLoopBound<HTTP1ConnectionHandler>
    ) {
        self.id = id
        self.key = key
        self.channel = channel
        self.eventLoop = channel.eventLoop
        self.handler = handler
        self.usage = Mutex(Usage())
    }

    /// The channel's event loop, kept: read through the channel, each use was a retain of the
    /// loop object from the caller's thread while the loop's own thread retains it all the time
    /// (a contended reference count on every request).
    let eventLoop: any EventLoop

    /// Runs `execution` on this connection.
    func execute(_ execution: RequestExecution) {
        let reused = usage.withLock { usage in
            usage.idle.markBusy()
            usage.requestsStarted += 1
            return usage.requestsStarted > 1
        }
        let handler = self.handler
        if eventLoop.inEventLoop {
            handler.value.start(execution, reused: reused)
        } else {
            eventLoop.execute { handler.value.start(execution, reused: reused) }
        }
    }

    func abort(_ execution: RequestExecution, with error: EngineError) {
        let handler = self.handler
        eventLoop.execute { handler.value.abort(execution, with: error) }
    }

    func pauseStateChanged(_ execution: RequestExecution) {
        let handler = self.handler
        eventLoop.execute { handler.value.pauseStateChanged(execution) }
    }

    func close() {
        let handler = self.handler
        eventLoop.execute { handler.value.closeIfIdle() }
    }

    /// Marks the connection idle now; returns whether the caller must arm the idle timer
    /// (one timer at a time per connection, re-armed only when it fires).
    func markIdle() -> Bool {
        usage.withLock { $0.idle.markIdle() }
    }

    /// The idle timer fired: returns when the connection became idle, or nil if it is busy
    /// (the timer is then disarmed until the next park).
    func idleTimerFired() -> NIODeadline? {
        usage.withLock { $0.idle.timerFired() }
    }
}

extension HTTP1Connection {
    /// Connects the handler to the pool. Must run on the event loop, before the first request.
    func installCallbacks(
        onRequestEnded: @escaping @Sendable (Bool) -> Void,
        onClosed: @escaping @Sendable () -> Void,
        onRetry: @escaping @Sendable (RequestExecution, ReplayEligibility) -> Bool
    ) {
        let handler = self.handler.value
        handler.onRequestEnded = onRequestEnded
        handler.onClosed = onClosed
        handler.onRetry = onRetry
    }
}
