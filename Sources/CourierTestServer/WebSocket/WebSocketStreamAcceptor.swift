import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOWebSocket

/// The first handler of every server HTTP/2 stream: an RFC 8441 extended CONNECT with
/// `:protocol websocket` to a `/ws/…` path is answered here (`200` and the stream becomes the
/// socket, served by ``TestWebSocketHandler`` as over HTTP/1.1; or the endpoint's refusal),
/// and every other stream passes on to the HTTP handlers behind it.
///
/// The socket's handlers go in right after this one, so nothing reaches the HTTP handlers
/// (the WebSocket handler keeps what it reads). Runs on the stream channel's event loop.
final class WebSocketStreamAcceptor: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let registry: ConnectionRegistry
    private let scheme: String
    private var decided = false

    init(registry: ConnectionRegistry, scheme: String) {
        self.registry = registry
        self.scheme = scheme
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else {
            context.fireChannelRead(data)
            return
        }
        decided = true
        guard case .headers(let frame) = unwrapInboundIn(data), frame.headers.first(name: ":method") == "CONNECT",
            frame.headers.first(name: ":protocol") == "websocket"
        else {
            context.fireChannelRead(data)
            return
        }
        let request = Self.request(from: frame.headers, channel: context.channel, scheme: scheme)
        let segments = request.pathSegments
        guard segments.first == "ws" else {
            answer(.text("Extended CONNECT is served for /ws/… only\n", status: .notFound), context: context)
            return
        }
        switch WebSocketEndpoint.accept(request, Array(segments.dropFirst())) {
        case .refuse(let reply):
            answer(reply, context: context)
        case .accept(let endpoint):
            var headers: HPACKHeaders = [":status": "200"]
            for (name, value) in endpoint.answerFields { headers.add(name: name.lowercased(), value: value) }
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
            let rawWriter = RawWriter()
            let handlers: [any ChannelHandler] = [
                ServerStreamBytes(), rawWriter, ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 64 << 20)),
                WebSocketFrameEncoder(), TestWebSocketHandler(endpoint: endpoint, rawWriter: rawWriter, registry: registry),
            ]
            do {
                // One by one, in order: the WebSocket handler writes as it is added (a close, pings,
                // a flood), so the encoder and the stream's byte handler must be in place first.
                var previous: any ChannelHandler = self
                for handler in handlers {
                    try context.pipeline.syncOperations.addHandler(handler, position: .after(previous))
                    previous = handler
                }
            } catch {
                context.close(promise: nil)
            }
        }
    }

    /// A refusal as HTTP/2 frames: the status and fields, then the body, ending the stream.
    private func answer(_ reply: ServerReply, context: ChannelHandlerContext) {
        guard case .full(let status, let fields, let body) = reply else {
            context.close(promise: nil)
            return
        }
        var headers: HPACKHeaders = [":status": String(status.code)]
        for (name, value) in fields { headers.add(name: name.lowercased(), value: value) }
        headers.add(name: "content-length", value: String(body.count))
        context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: body.isEmpty))), promise: nil)
        if !body.isEmpty {
            var data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(context.channel.allocator.buffer(bytes: body)))
            data.endStream = true
            context.write(wrapOutboundOut(.data(data)), promise: nil)
        }
        context.flush()
    }

    /// The CONNECT as the endpoints see a request: its path, and its fields with the
    /// authority as `Host`.
    private static func request(from headers: HPACKHeaders, channel: any Channel, scheme: String) -> ServerRequest {
        var fields = HTTPHeaders()
        if let authority = headers.first(name: ":authority") { fields.add(name: "Host", value: authority) }
        for (name, value, _) in headers where !name.hasPrefix(":") {
            fields.add(name: name, value: value)
        }
        let head = HTTPRequestHead(
            version: .init(major: 2, minor: 0), method: .CONNECT, uri: headers.first(name: ":path") ?? "/", headers: fields)
        let parent = channel.parent ?? channel
        return ServerRequest(
            head: head, body: channel.allocator.buffer(capacity: 0), clientAddress: parent.remoteAddress?.ipAddress ?? "",
            scheme: scheme, serverAuthority: HTTPConnectionHandler.authority(of: parent.localAddress))
    }
}
