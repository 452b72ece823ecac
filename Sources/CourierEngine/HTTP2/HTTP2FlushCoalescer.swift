import NIOCore

/// Sits right before `NIOHTTP2Handler` (on the socket side) and turns the flushes of many
/// streams in one event-loop tick into one flush of the connection.
///
/// Why: each request starts its stream from its own event-loop task, and each start flushes.
/// Passed straight on, 64 requests in flight meant 64 flushes, 64 TLS records and 64 `write`
/// calls, one per HEADERS frame (a tenth of the loop's time in `write` alone). Deferring the
/// flush to a task queued behind the ones already waiting lets every stream started in the
/// same tick share one flush: NIOSSL seals the tick's frames together and the kernel sees one
/// `write`. A flush is never dropped, only moved to the end of the current batch of tasks, so
/// a lone request waits one task hop, not a timer.
///
/// Event-loop confined.
final class HTTP2FlushCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = Any
    typealias OutboundOut = Any

    /// Whether a deferred flush is already queued for this tick.
    private var flushQueued = false

    func flush(context: ChannelHandlerContext) {
        guard !flushQueued else { return }
        flushQueued = true
        context.eventLoop.assumeIsolated().execute {
            self.flushQueued = false
            context.flush()
        }
    }
}
