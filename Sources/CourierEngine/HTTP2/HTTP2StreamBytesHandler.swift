import NIOCore
import NIOHTTP2

/// Carries a byte stream over one HTTP/2 stream (an RFC 8441 tunnel: a WebSocket): the DATA
/// frames' payloads go up as `ByteBuffer`s, bytes written down go out as DATA frames. Flow
/// control is NIOHTTP2's: the stream's window opens as what arrived is read, so a reader
/// that stops reading stops the peer.
///
/// What is written between two flushes leaves as one DATA frame (a WebSocket frame's header
/// and payload travel together), split only where a frame would pass
/// ``coalescingLimit``.
///
/// Ending: ``OutputEnds`` (sent down after the last write, before its flush) puts
/// `END_STREAM` on that last DATA frame, so a WebSocket's close frame ends the stream in the
/// same frame. When the peer ends its side this side ends too (an empty DATA frame if it had
/// not yet), which closes the stream and its channel cleanly. A close from above ends this
/// side first and waits (up to ``closeGrace``) for the peer to end its own; past that the
/// stream is reset.
///
/// Lives on its stream channel's event loop.
final class HTTP2StreamBytesHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// The outbound event that ends this side of the stream with the writes before it.
    struct OutputEnds: Sendable {}

    /// How long a close waits for the peer's `END_STREAM` before resetting the stream.
    static let closeGrace = TimeAmount.seconds(1)

    /// Writes are joined into one DATA frame up to this many bytes (HTTP/2's smallest
    /// maximum frame size, so NIOHTTP2 never has to split what was joined).
    static let coalescingLimit = 16_384

    private var sentEnd = false
    private var endRequested = false
    private var peerEnded = false
    private var graceTimer: Scheduled<Void>?
    private var pending: [(bytes: ByteBuffer, promise: EventLoopPromise<Void>?)] = []

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
        guard !sentEnd, !endRequested else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        pending.append((unwrapOutboundIn(data), promise))
    }

    func flush(context: ChannelHandlerContext) {
        writePending(context: context, endingStream: endRequested)
        context.flush()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is OutputEnds else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        endRequested = true
        promise?.succeed()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, !peerEnded, graceTimer == nil else {
            failPending(ChannelError.ioOnClosedChannel)
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
        failPending(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    /// Sends this side's `END_STREAM`, once: on the last pending DATA frame, or alone.
    private func endStream(context: ChannelHandlerContext) {
        guard !sentEnd else { return }
        writePending(context: context, endingStream: true)
        context.flush()
    }

    /// Writes what is pending as DATA frames, joining neighbours up to ``coalescingLimit``;
    /// with `endingStream` the last frame (an empty one if nothing is pending) ends the stream.
    private func writePending(context: ChannelHandlerContext, endingStream: Bool) {
        guard !sentEnd, !pending.isEmpty || endingStream else { return }
        var writes = pending[...]
        pending = []
        if endingStream { sentEnd = true }
        if writes.isEmpty {
            writes.append((context.channel.allocator.buffer(capacity: 0), nil))
        }
        while let first = writes.popFirst() {
            var bytes = first.bytes
            var promises = first.promise.map { [$0] } ?? []
            while let next = writes.first, bytes.readableBytes + next.bytes.readableBytes <= Self.coalescingLimit {
                writes.removeFirst()
                bytes.writeImmutableBuffer(next.bytes)
                if let promise = next.promise { promises.append(promise) }
            }
            var frame = HTTP2Frame.FramePayload.Data(data: .byteBuffer(bytes))
            frame.endStream = endingStream && writes.isEmpty
            context.write(wrapOutboundOut(.data(frame)), promise: Self.joined(promises, on: context.eventLoop))
        }
    }

    /// One promise for a frame made of several writes: completing it completes theirs.
    private static func joined(_ promises: [EventLoopPromise<Void>], on loop: any EventLoop) -> EventLoopPromise<Void>? {
        guard let first = promises.first else { return nil }
        guard promises.count > 1 else { return first }
        let joined = loop.makePromise(of: Void.self)
        for promise in promises { joined.futureResult.cascade(to: promise) }
        return joined
    }

    private func failPending(_ error: any Error) {
        let writes = pending
        pending = []
        for write in writes { write.promise?.fail(error) }
    }
}
