import NIOCore

/// Sits right before `NIOHTTP2Handler` and hands it the connection's bytes in slices of at
/// most ``maximumSlice`` bytes (no copy: each slice shares the read's storage).
///
/// Why: NIOHTTP2's frame decoder keeps one accumulation buffer whose capacity follows the
/// largest read it was given, and every DATA frame it emits is a slice of that buffer. While
/// a slice is still held (a paused stream's buffered frames, a caller that keeps body parts),
/// the decoder's next append copies the whole buffer to a new one of the same capacity, so
/// each few-kilobyte body part can keep a buffer of hundreds of kilobytes or more alive, and
/// each read copies that much. Reads of at most one frame's worth keep that buffer small.
///
/// Event-loop confined.
final class HTTP2ReadSlicer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The largest slice passed on: the default (and smallest allowed) HTTP/2 frame size.
    static let maximumSlice = 16_384

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if buffer.readableBytes <= Self.maximumSlice {
            context.fireChannelRead(data)
            return
        }
        while let slice = buffer.readSlice(length: min(Self.maximumSlice, buffer.readableBytes)), slice.readableBytes > 0 {
            context.fireChannelRead(wrapInboundOut(slice))
        }
    }
}
