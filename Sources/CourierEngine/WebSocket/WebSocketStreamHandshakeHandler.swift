import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// Opens a WebSocket as an HTTP/2 stream (RFC 8441): sends the extended CONNECT and reads the
/// answer. On a `2xx` that completes the handshake it puts the socket's handlers after itself
/// (``HTTP2StreamBytesHandler``, the frame decoder and encoder, ``WebSocketChannelHandler``)
/// and leaves; DATA that follows the answer goes to them. Any other answer is read whole (its
/// body up to 64 KiB) and handed back, and the stream is closed; the connection stays.
///
/// Lives on its stream channel's event loop.
final class WebSocketStreamHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let headers: HPACKHeaders
    private let handshake: WebSocketHandshake
    private let makeHandlers: (WebSocketHandshake.Agreement) throws -> [any ChannelHandler]
    private var promise: EventLoopPromise<WebSocketHandshakeHandler.Outcome>?
    private var response: HTTPResponseHead?
    private var body: ByteBuffer?
    private var requestStart = NIODeadline.now()

    /// `headers`: the extended CONNECT's fields; `makeHandlers` makes the handlers that run
    /// the socket once the server agreed.
    init(
        headers: HPACKHeaders, handshake: WebSocketHandshake, promise: EventLoopPromise<WebSocketHandshakeHandler.Outcome>,
        makeHandlers: @escaping (WebSocketHandshake.Agreement) throws -> [any ChannelHandler]
    ) {
        self.headers = headers
        self.handshake = handshake
        self.promise = promise
        self.makeHandlers = makeHandlers
    }

    func channelActive(context: ChannelHandlerContext) {
        requestStart = .now()
        context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            guard response == nil else {
                // Trailers end a refusal's body.
                if frame.endStream { refuse(context: context) }
                return
            }
            guard let head = Self.responseHead(frame.headers) else {
                finish(.failure(WebSocketError.handshakeFailed("the server's answer to the extended CONNECT has no valid :status")))
                context.close(promise: nil)
                return
            }
            response = head
            if (200..<300).contains(head.status.code) {
                guard !frame.endStream else {
                    finish(.failure(WebSocketError.handshakeFailed("the server accepted the WebSocket stream and ended it at once")))
                    context.close(promise: nil)
                    return
                }
                open(head, context: context)
            } else if frame.endStream {
                refuse(context: context)
            }
        case .data(let frame):
            guard response != nil, case .byteBuffer(var chunk) = frame.data else { return }
            if body == nil { body = context.channel.allocator.buffer(capacity: chunk.readableBytes) }
            let room = WebSocketHandshakeHandler.refusalBodyLimit - (body?.readableBytes ?? 0)
            if room > 0, let slice = chunk.readSlice(length: min(room, chunk.readableBytes)) {
                body?.writeImmutableBuffer(slice)
            }
            if frame.endStream { refuse(context: context) }
        default:
            break
        }
    }

    /// The server agreed: the socket's handlers go in after this one, which leaves.
    private func open(_ head: HTTPResponseHead, context: ChannelHandlerContext) {
        do {
            let agreement = try handshake.agreement(withExtendedConnectResponse: head)
            try context.pipeline.syncOperations.addHandlers(makeHandlers(agreement), position: .after(self))
            finish(.success(.upgraded(head, agreement, requestStart: requestStart)))
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            finish(.failure(error))
            context.close(promise: nil)
        }
    }

    private func refuse(context: ChannelHandlerContext) {
        guard let response else { return }
        finish(.success(.refused(response, body: body ?? context.channel.allocator.buffer(capacity: 0))))
        context.close(promise: nil)
    }

    /// An HTTP/1-style head for the answer: its status, and its fields without the pseudo ones.
    static func responseHead(_ headers: HPACKHeaders) -> HTTPResponseHead? {
        guard let status = headers.first(name: ":status").flatMap(Int.init), (100...999).contains(status) else { return nil }
        var fields = HTTPHeaders()
        for (name, value, _) in headers where !name.hasPrefix(":") {
            fields.add(name: name, value: value)
        }
        return HTTPResponseHead(version: .init(major: 2, minor: 0), status: .init(statusCode: status), headers: fields)
    }

    /// The stream ended before the server answered (reset, or the connection went away): the
    /// socket may open over HTTP/1.1 instead.
    struct Unanswered: Error {
        var underlying: any Error
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let mapped = EngineErrorMapping.map(error, host: headers.first(name: ":authority") ?? "")
        finish(.failure(response == nil ? Unanswered(underlying: mapped) : mapped))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let lost = EngineError.connectionLost("the server reset the WebSocket stream during the handshake")
        finish(.failure(response == nil ? Unanswered(underlying: lost) : lost))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<WebSocketHandshakeHandler.Outcome, any Error>) {
        guard let promise else { return }
        self.promise = nil
        promise.completeWith(result)
    }
}
