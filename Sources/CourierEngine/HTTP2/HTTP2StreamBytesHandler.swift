import NIOCore
import NIOHTTP2

/// Carries a byte stream over one HTTP/2 stream (an RFC 8441 tunnel: a WebSocket): the DATA
/// frames' payloads go up as `ByteBuffer`s, bytes written down go out as DATA frames. Flow
/// control is NIOHTTP2's: the stream's window opens as what arrived is read, so a reader
/// that stops reading stops the peer.
///
/// Ending: when the peer ends its side (`END_STREAM`) this side ends too, which closes the
/// stream and its channel cleanly. A close from above ends this side first and waits (up to
/// ``closeGrace``) for the peer to end its own; past that the stream is reset.
///
/// Lives on its stream channel's event loop.
final class HTTP2StreamBytesHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// How long a close waits for the peer's `END_STREAM` before resetting the stream.
    static let closeGrace = TimeAmount.seconds(1)

    private var sentEnd = false
    private var peerEnded = false
    private var graceTimer: Scheduled<Void>?

    /// A handler for a stream whose tunnel is open.
    init() {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .data(let frame) = unwrapInboundIn(data) else { return }
        if case .byteBuffer(let bytes) = frame.data, bytes.readableBytes > 0 {
            context.fireChannelRead(wrapInboundOut(bytes))
        }
        if frame.endStream {
            peerEnded = true
            endStream(context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !sentEnd else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        let frame = HTTP2Frame.FramePayload.Data(data: .byteBuffer(unwrapOutboundIn(data)))
        context.write(wrapOutboundOut(.data(frame)), promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, !peerEnded, graceTimer == nil else {
            context.close(mode: mode, promise: promise)
            return
        }
        endStream(context: context)
        if let promise { context.channel.closeFuture.cascade(to: promise) }
        graceTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.closeGrace) {
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        graceTimer?.cancel()
        context.fireChannelInactive()
    }

    /// Sends this side's `END_STREAM` (an empty DATA frame), once.
    private func endStream(context: ChannelHandlerContext) {
        guard !sentEnd else { return }
        sentEnd = true
        var frame = HTTP2Frame.FramePayload.Data(data: .byteBuffer(context.channel.allocator.buffer(capacity: 0)))
        frame.endStream = true
        context.writeAndFlush(wrapOutboundOut(.data(frame)), promise: nil)
    }
}
