import NIOCore

/// A pass-through handler placed below the HTTP codec (just above TLS, if any) so that fault
/// endpoints can write bytes the `HTTPResponseEncoder` would never produce: lying
/// `Content-Length`s, broken chunking, unfinished header blocks.
///
/// Everything else flows through untouched.
final class RawWriter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes and flushes `bytes` below the HTTP encoder. Must be called on the channel's event loop.
    func write(_ bytes: [UInt8]) {
        guard let context else { return }
        let buffer = context.channel.allocator.buffer(bytes: bytes)
        context.writeAndFlush(self.wrapOutboundOut(buffer), promise: nil)
    }
}
