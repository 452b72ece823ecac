import NIOCore
import NIOHTTP2

/// Polices a stream's send window (``HTTP2SendWindow``) at the head of the stream's pipeline:
/// a `WINDOW_UPDATE` taking it past 2³¹−1 resets the stream with `FLOW_CONTROL_ERROR` and fails
/// the request with ``EngineError/http2ProtocolViolation(_:)`` (RFC 9113 §6.9.1).
///
/// NIOHTTP2 polices the window while the request is still sending, but once the request has
/// ended (a GET, or an upload fully sent) it stops tracking it and passes such an update to
/// the stream; this handler sees every update, in every state. Frames after the violation are
/// dropped. Event-loop confined.
final class HTTP2StreamWindowGuard: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var window = HTTP2SendWindow()
    private var violated = false
    /// The peer's current `SETTINGS_INITIAL_WINDOW_SIZE` (the connection's observer knows it).
    private let initialWindowSize: () -> Int

    init(initialWindowSize: @escaping () -> Int) {
        self.initialWindowSize = initialWindowSize
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if violated { return }
        guard case .windowUpdate(let increment) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        switch window.receiveWindowUpdate(increment: increment, initialWindowSize: initialWindowSize()) {
        case .accepted:
            context.fireChannelRead(data)
        case .overflow(let size):
            violated = true
            context.writeAndFlush(wrapOutboundOut(.rstStream(.flowControlError)), promise: nil)
            let violation = HTTP2ProtocolViolation(
                name: "InvalidFlowControlWindowSize", endedBy: .courier, scope: .stream, errorCode: "FLOW_CONTROL_ERROR",
                reason: "a WINDOW_UPDATE of \(increment) took the stream's send window to \(size), past 2^31-1")
            context.fireErrorCaught(EngineError.http2ProtocolViolation(violation))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .data(let payload) = unwrapOutboundIn(data) {
            window.sent(payload.data.readableBytes + (payload.paddingBytes.map { $0 + 1 } ?? 0))
        }
        context.write(data, promise: promise)
    }
}
