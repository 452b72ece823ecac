import NIOCore
import NIOHTTP2

/// Who reset an HTTP/2 stream: the server, or Courier over something the server sent.
///
/// When NIOHTTP2 finds a stream error in what the server sent (a response head without
/// `:status`, a header list past the limit), it writes `RST_STREAM` and, in the same call, closes
/// the stream (this handler sees `StreamClosed`) before it raises the error itself on the
/// connection, where ``HTTP2ConnectionObserver`` records it. A connection error that ends every
/// stream arrives the same way (each stream closed with `CANCEL` before the error). So a closure
/// with nothing to claim yet waits until the loop comes round, when the observer holds the
/// violation if there was one; with none, the server reset the stream.
extension HTTP1ConnectionHandler {
    func awaitClaim(on closed: NIOHTTP2Errors.StreamClosed, context: ChannelHandlerContext) {
        guard resetAwaitingClaim == nil else { return }
        resetAwaitingClaim = closed
        context.eventLoop.assumeIsolated().execute {
            self.settleClaim(context: context)
        }
    }

    private func settleClaim(context: ChannelHandlerContext) {
        guard let closed = resetAwaitingClaim else { return }
        resetAwaitingClaim = nil
        if let violation = http2Observer?.claimViolation(resetWith: closed.errorCode) {
            fail(with: .http2ProtocolViolation(violation), context: context)
        } else {
            fail(with: mapError(closed), context: context)
        }
        if inactiveWhileAwaitingClaim {
            inactiveWhileAwaitingClaim = false
            channelInactive(context: context)
        }
    }
}
