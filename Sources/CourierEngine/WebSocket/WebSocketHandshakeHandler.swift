import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Sends the opening handshake on a new HTTP/1.1 connection and reads the answer. On a `101`
/// that completes the handshake it swaps the HTTP handlers for the WebSocket ones (frame
/// decoder and encoder, ``WebSocketChannelHandler``); any bytes the server sent after the `101`
/// go to the frame decoder. Any other answer is read whole (its body up to 64 KiB) and handed
/// back, and the connection is closed.
///
/// Lives on its channel's event loop, after `HTTPRequestEncoder` and an `HTTPResponseDecoder`
/// that forwards its left-over bytes.
final class WebSocketHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// How the handshake ended.
    enum Outcome {
        case upgraded(HTTPResponseHead, WebSocketHandshake.Agreement, requestStart: NIODeadline)
        case refused(HTTPResponseHead, body: ByteBuffer)
    }

    static let refusalBodyLimit = 64 * 1024

    private let head: HTTPRequestHead
    private let handshake: WebSocketHandshake
    private let makeHandlers: (WebSocketHandshake.Agreement) throws -> [any ChannelHandler]
    private var promise: EventLoopPromise<Outcome>?
    private var response: HTTPResponseHead?
    private var body: ByteBuffer?
    private var requestStart = NIODeadline.now()
    /// After the `101`, while the HTTP handlers leave: what arrives (the bytes the decoder
    /// forwards as it leaves) is kept, unread, for the frame decoder.
    private var upgrading = false
    private var held: [NIOAny] = []

    /// `makeHandlers` makes the handlers that run the socket once the server agreed.
    init(
        head: HTTPRequestHead, handshake: WebSocketHandshake, promise: EventLoopPromise<Outcome>,
        makeHandlers: @escaping (WebSocketHandshake.Agreement) throws -> [any ChannelHandler]
    ) {
        self.head = head
        self.handshake = handshake
        self.promise = promise
        self.makeHandlers = makeHandlers
    }

    func handlerAdded(context: ChannelHandlerContext) {
        requestStart = .now()
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if upgrading {
            held.append(data)
            return
        }
        switch unwrapInboundIn(data) {
        case .head(let head):
            response = head
        case .body(var chunk):
            guard response?.status != .switchingProtocols else { return }
            if body == nil { body = context.channel.allocator.buffer(capacity: chunk.readableBytes) }
            let room = Self.refusalBodyLimit - (body?.readableBytes ?? 0)
            if room > 0, let slice = chunk.readSlice(length: min(room, chunk.readableBytes)) {
                body?.writeImmutableBuffer(slice)
            }
        case .end:
            guard let response else { return }
            if response.status == .switchingProtocols {
                upgrade(response, context: context)
            } else {
                finish(.success(.refused(response, body: body ?? context.channel.allocator.buffer(capacity: 0))))
                context.close(promise: nil)
            }
        }
    }

    /// The `101` completes the handshake: the HTTP encoder and decoder leave (the decoder on a
    /// later turn of the loop, forwarding the bytes that followed the `101`), then the WebSocket
    /// handlers go in after this handler, get what it held, and this handler leaves. Until then
    /// nothing writes: the leaving decoder would take a frame for a request.
    private func upgrade(_ response: HTTPResponseHead, context: ChannelHandlerContext) {
        let agreement: WebSocketHandshake.Agreement
        let removals: [EventLoopFuture<Void>]
        do {
            agreement = try handshake.agreement(with: response)
            let sync = context.pipeline.syncOperations
            removals = [
                try sync.removeHandler(context: sync.context(handlerType: HTTPRequestEncoder.self)),
                try sync.removeHandler(context: sync.context(handlerType: ByteToMessageHandler<HTTPResponseDecoder>.self)),
            ]
        } catch {
            finish(.failure(error))
            context.close(promise: nil)
            return
        }
        upgrading = true
        let start = requestStart
        EventLoopFuture.andAllSucceed(removals, on: context.eventLoop).assumeIsolated().whenComplete { [self] result in
            do {
                try result.get()
                try context.pipeline.syncOperations.addHandlers(makeHandlers(agreement), position: .after(self))
            } catch {
                finish(.failure(error))
                context.close(promise: nil)
                return
            }
            finish(.success(.upgraded(response, agreement, requestStart: start)))
            let held = self.held
            self.held = []
            for data in held { context.fireChannelRead(data) }
            if !held.isEmpty { context.fireChannelReadComplete() }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(EngineErrorMapping.map(error, host: head.headers.first(name: "host") ?? "")))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(EngineError.connectionLost("the server closed the connection during the WebSocket handshake")))
        context.fireChannelInactive()
    }

    /// Fails the handshake with `error` (its deadline passed) and closes the connection.
    func abandon(_ error: any Error, context: ChannelHandlerContext) {
        finish(.failure(error))
        context.close(promise: nil)
    }

    private func finish(_ result: Result<Outcome, any Error>) {
        guard let promise else { return }
        self.promise = nil
        promise.completeWith(result)
    }
}
