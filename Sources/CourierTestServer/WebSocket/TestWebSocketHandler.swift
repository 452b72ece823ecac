import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The server side of a `/ws/…` endpoint after its `101`: echoes messages (joining fragments,
/// inflating and compressing with permessage-deflate when negotiated), answers pings, answers
/// a close with a close and ends the connection, and first does what the endpoint says
/// (close, ping, flood, raw bytes, a deflate bomb).
///
/// Runs on the channel's event loop.
final class TestWebSocketHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let endpoint: WebSocketEndpoint
    private let rawWriter: RawWriter
    private let registry: ConnectionRegistry
    private let deflate: ServerDeflate?
    private var message: (opcode: WebSocketOpcode, compressed: Bool, payload: ByteBuffer)?
    private var readingHeld = false
    private var readPending = false
    private var closed = false

    init(endpoint: WebSocketEndpoint, rawWriter: RawWriter, registry: ConnectionRegistry) {
        self.endpoint = endpoint
        self.rawWriter = rawWriter
        self.registry = registry
        self.deflate = endpoint.deflate.flatMap { try? ServerDeflate(parameters: $0) }
    }

    /// Replaces the HTTP/1.1 server handlers (and `handler`) with the WebSocket ones, once
    /// they are gone (the request decoder leaves on a later turn of the loop): a frame written
    /// meanwhile would meet the HTTP encoder.
    static func takeOver(
        _ sync: ChannelPipeline.SynchronousOperations, from handler: HTTPConnectionHandler, endpoint: WebSocketEndpoint,
        rawWriter: RawWriter, registry: ConnectionRegistry, channel: any Channel
    ) throws {
        var removals = [sync.removeHandler(handler)]
        if let errors = try? sync.context(handlerType: HTTPServerProtocolErrorHandler.self) { removals.append(sync.removeHandler(context: errors)) }
        if let validator = try? sync.context(handlerType: NIOHTTPResponseHeadersValidator.self) {
            removals.append(sync.removeHandler(context: validator))
        }
        removals.append(try sync.removeHandler(context: sync.context(handlerType: HTTPServerPipelineHandler.self)))
        removals.append(try sync.removeHandler(context: sync.context(handlerType: HTTPResponseEncoder.self)))
        removals.append(try sync.removeHandler(context: sync.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)))
        let handlers = NIOLoopBound(
            (
                ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 64 << 20)), WebSocketFrameEncoder(),
                TestWebSocketHandler(endpoint: endpoint, rawWriter: rawWriter, registry: registry)
            ), eventLoop: channel.eventLoop)
        EventLoopFuture.andAllSucceed(removals, on: channel.eventLoop).whenComplete { result in
            let (decoder, encoder, webSocket) = handlers.value
            do {
                try result.get()
                try channel.pipeline.syncOperations.addHandlers([decoder, encoder, webSocket])
            } catch {
                channel.close(promise: nil)
            }
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        switch endpoint.behaviour {
        case .closeAtOnce(let code, let reason):
            var payload = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
            payload.writeInteger(UInt16(truncatingIfNeeded: code))
            payload.writeString(reason)
            send(.connectionClose, payload, context: context)
            closed = true
        case .ping(let count):
            for index in 0..<count {
                send(.ping, context.channel.allocator.buffer(string: "ping-\(index + 1)"), context: context)
            }
        case .flood(let count, let size):
            let payload = context.channel.allocator.buffer(repeating: 0x62, count: size)
            for _ in 0..<count { context.write(wrapOutboundOut(frame(.binary, payload)), promise: nil) }
            context.flush()
        case .raw(let bytes):
            rawWriter.write(bytes)
        case .sendFirst(let text):
            send(.text, context.channel.allocator.buffer(string: text), context: context)
        case .bomb(let size):
            guard let deflate else { return }
            let zeros = context.channel.allocator.buffer(repeating: 0, count: size)
            if let compressed = try? deflate.compress(zeros, allocator: context.channel.allocator) {
                context.writeAndFlush(wrapOutboundOut(frame(.binary, compressed, rsv1: true)), promise: nil)
            }
        case .echo, .slow, .noCloseReply:
            break
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        var payload = frame.unmaskedData
        switch frame.opcode {
        case .connectionClose:
            registry.webSocketCloseReceived(code: payload.readInteger(as: UInt16.self).map(Int.init))
            if case .noCloseReply = endpoint.behaviour { return }
            if !closed {
                closed = true
                send(.connectionClose, frame.unmaskedData, context: context)
            }
            context.close(promise: nil)
        case .ping:
            send(.pong, payload, context: context)
        case .pong:
            registry.webSocketPongReceived(Array(payload.readableBytesView))
        case .text, .binary:
            message = (frame.opcode, frame.rsv1, payload)
            if frame.fin { messageEnded(context: context) }
        case .continuation:
            message?.payload.writeBuffer(&payload)
            if frame.fin { messageEnded(context: context) }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if readingHeld {
            readPending = true
        } else {
            context.read()
        }
    }

    private func messageEnded(context: ChannelHandlerContext) {
        guard let (opcode, compressed, payload) = message else { return }
        message = nil
        guard !closed else { return }
        var plain = payload
        if compressed {
            guard let deflate, let inflated = try? deflate.decompress(payload, allocator: context.channel.allocator) else {
                context.close(promise: nil)
                return
            }
            plain = inflated
        }
        if let deflate, plain.readableBytes > 0, let recompressed = try? deflate.compress(plain, allocator: context.channel.allocator) {
            context.writeAndFlush(wrapOutboundOut(frame(opcode, recompressed, rsv1: true)), promise: nil)
        } else {
            send(opcode, plain, context: context)
        }
        if case .slow(let delay) = endpoint.behaviour {
            readingHeld = true
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(delay))) { [self] in
                readingHeld = false
                if readPending {
                    readPending = false
                    context.read()
                }
            }
        }
    }

    private func send(_ opcode: WebSocketOpcode, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(frame(opcode, payload)), promise: nil)
    }

    private func frame(_ opcode: WebSocketOpcode, _ payload: ByteBuffer, rsv1: Bool = false) -> WebSocketFrame {
        WebSocketFrame(fin: true, rsv1: rsv1, opcode: opcode, data: payload)
    }
}
