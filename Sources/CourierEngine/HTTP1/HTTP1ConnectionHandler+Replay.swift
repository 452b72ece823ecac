import NIOCore
import NIOHTTP2

/// Which failed requests go again on a new connection (``ReplayEligibility``): a reused
/// keep-alive connection found dead before any answer, an HTTP/2 stream the server never
/// processed, a `421` on another host's coalesced connection. The pool decides whether the
/// request may (``RequestExecution/mayReplay(_:)``) and sends it; the failed attempt's metrics
/// are kept for the final ones.
extension HTTP1ConnectionHandler {
    /// Ends `execution` with `error`, unless `replay` (or the error itself) lets the pool send
    /// it again.
    func fail(
        _ execution: RequestExecution,
        _ error: EngineError,
        replay: ReplayEligibility,
        metrics: EngineMetrics? = nil
    ) {
        // A stream the HTTP/2 server refused (or never took, after GOAWAY), or answered 421 on
        // another host's connection, was not processed: it may go again, whatever its method.
        let unprocessed = error == EngineErrorMapping.http2StreamRefused || error == EngineErrorMapping.misdirectedOnCoalescedConnection
        let replay = unprocessed ? .unsent : replay
        if replay != .none, let onRetry, onRetry(execution, replay) {
            if let metrics { execution.recordReplayedAttempt(metrics) }
            return
        }
        execution.finish(.failure(error), metrics: metrics)
    }

    /// Whether `error` closed an HTTP/2 stream the server's `GOAWAY` says it never processed.
    func isUnprocessedStream(_ error: any Error, context: ChannelHandlerContext) -> Bool {
        guard let http2Observer, error is NIOHTTP2Errors.StreamClosed, let last = http2Observer.goAwayLastStreamID,
            let id = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        else { return false }
        return id > last
    }
}
