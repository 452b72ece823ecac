import NIOCore
import NIOHTTP2

/// The server's end of a WebSocket carried by an HTTP/2 stream (RFC 8441): DATA payloads go
/// up as bytes, bytes written go out as DATA. When the client ends its side the server ends
/// its own (the stream then closes cleanly); a close from above ends the server's side and
/// resets the stream only if the client has not ended its side within a second.
final class ServerStreamBytes: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var ended = false
    private var clientEnded = false
    private var closing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .data(let frame) = unwrapInboundIn(data) else { return }
        if case .byteBuffer(let bytes) = frame.data, bytes.readableBytes > 0 {
            context.fireChannelRead(wrapInboundOut(bytes))
        }
        if frame.endStream {
            clientEnded = true
            end(context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !ended else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(unwrapOutboundIn(data))))), promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, !clientEnded, !closing else {
            context.close(mode: mode, promise: promise)
            return
        }
        closing = true
        end(context: context)
        if let promise { context.channel.closeFuture.cascade(to: promise) }
        context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { context.close(promise: nil) }
    }

    private func end(context: ChannelHandlerContext) {
        guard !ended else { return }
        ended = true
        var frame = HTTP2Frame.FramePayload.Data(data: .byteBuffer(context.channel.allocator.buffer(capacity: 0)))
        frame.endStream = true
        context.writeAndFlush(wrapOutboundOut(.data(frame)), promise: nil)
    }
}
