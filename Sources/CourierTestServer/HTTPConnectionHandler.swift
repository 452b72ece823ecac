import Crypto
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves the requests of one connection: gathers each request (buffering the body, or
/// hashing it on the fly for `/upload`), asks the router for a reply and carries the reply
/// out, including delays, paced bodies and raw fault steps.
///
/// Runs on the channel's event loop only. Pipelined requests are held back by NIO's
/// `HTTPServerPipelineHandler` until the current response has ended, so there is never
/// more than one request in flight here.
final class HTTPConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bodies larger than this are refused with 413 (except by `/upload`, which streams).
    static let maximumBufferedBodySize = 64 * 1024 * 1024

    private enum State {
        /// Waiting for a request head.
        case idle
        /// Gathering the body of `head` into `body`.
        case buffering(HTTPRequestHead)
        /// Counting and hashing the body of `head` without keeping it.
        case uploading(HTTPRequestHead)
        /// A final reply was already sent for this request (413, 417); the rest of it is
        /// dropped and the connection closes.
        case ignoringBody
        /// A reply is being carried out.
        case responding
        /// A raw fault reply took the connection over; HTTP framing no longer applies.
        case hijacked
    }

    private let router: RequestRouter
    private let rawWriter: RawWriter
    private let registry: ConnectionRegistry
    private let scheme: String

    private var state = State.idle
    private var body = ByteBuffer()
    private var upload: UploadDigest?
    private var sentContinue = false
    private var pendingTask: Scheduled<Void>?
    private var isActive = true
    /// A generated body waiting for the channel to become writable: (next offset, total, keep-alive).
    private var pendingGenerated: (offset: Int, length: Int, keepAlive: Bool)?

    init(router: RequestRouter, rawWriter: RawWriter, registry: ConnectionRegistry, scheme: String) {
        self.router = router
        self.rawWriter = rawWriter
        self.registry = registry
        self.scheme = scheme
    }

    // MARK: - Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (self.unwrapInboundIn(data), self.state) {
        case (.head(var head), .idle):
            // A request through a forward proxy names the whole URL (RFC 9112 §3.2.2).
            head.uri = Self.originForm(of: head.uri)
            self.receivedHead(head, context: context)
        case (.head, _):
            // Cannot happen behind HTTPServerPipelineHandler; refuse to guess.
            context.close(promise: nil)
        case (.body(var chunk), .buffering(let head)):
            if self.body.readableBytes + chunk.readableBytes > Self.maximumBufferedBodySize {
                self.state = .ignoringBody
                self.perform(Self.payloadTooLarge, for: head, keepAlive: false, context: context)
            } else {
                self.body.writeBuffer(&chunk)
            }
        case (.body(let chunk), .uploading):
            self.upload?.add(chunk)
        case (.body, _):
            break
        case (.end, .buffering(let head)):
            let request = ServerRequest(
                head: head,
                body: self.body,
                clientAddress: context.channel.remoteAddress?.ipAddress ?? "",
                scheme: self.scheme,
                serverAuthority: Self.authority(of: context.channel.localAddress)
            )
            self.body = ByteBuffer()
            self.state = .responding
            self.perform(self.router.reply(to: request), for: head, keepAlive: head.isKeepAlive, context: context)
        case (.end, .uploading(let head)):
            let reply = self.upload?.reply() ?? .json(["bytes": .int(0)])
            self.upload = nil
            self.state = .responding
            self.perform(reply, for: head, keepAlive: head.isKeepAlive, context: context)
        case (.end, _):
            break
        }
    }

    /// `http://host:port/path?q` → `/path?q`; other targets unchanged.
    static func originForm(of uri: String) -> String {
        let lowered = uri.prefix(8).lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return uri }
        let afterScheme = uri[uri.index(uri.startIndex, offsetBy: lowered.hasPrefix("http://") ? 7 : 8)...]
        guard let slash = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let rest = afterScheme[slash...]
        return rest.hasPrefix("?") ? "/" + rest : String(rest)
    }

    private func receivedHead(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        self.registry.requestReceived(target: Self.originForm(of: head.uri))
        self.sentContinue = false
        self.body = context.channel.allocator.buffer(capacity: 0)

        let expectation = head.headers.first(name: "expect")?.lowercased()
        if let expectation, expectation != "100-continue" {
            self.state = .ignoringBody
            self.perform(.text("Unsupported expectation\n", status: .expectationFailed), for: head, keepAlive: false, context: context)
            return
        }
        let streams = self.router.streamsBody(head)
        if !streams, let length = head.headers.first(name: "content-length").flatMap(Int.init),
            length > Self.maximumBufferedBodySize
        {
            self.state = .ignoringBody
            self.perform(Self.payloadTooLarge, for: head, keepAlive: false, context: context)
            return
        }
        // HTTP/1.0 clients cannot receive interim responses (RFC 9110 §10.1.1).
        if expectation == "100-continue", head.version.major > 1 || head.version.minor >= 1 {
            self.sendContinue(version: head.version, context: context)
        }
        if streams {
            self.upload = UploadDigest(head: head)
            self.state = .uploading(head)
        } else {
            self.state = .buffering(head)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isActive = false
        self.pendingTask?.cancel()
        self.pendingTask = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // HTTPServerProtocolErrorHandler has already answered parser errors with 400;
        // any error ends the connection.
        context.close(promise: nil)
    }

    /// `127.0.0.1:8080` or `[::1]:8080` for a listening address.
    static func authority(of address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress, let port = address.port else { return "localhost" }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    private static var payloadTooLarge: ServerReply {
        .text("Request body larger than \(maximumBufferedBodySize) bytes\n", status: .payloadTooLarge)
    }

    // MARK: - Carrying out replies

    private func sendContinue(version: HTTPVersion, context: ChannelHandlerContext) {
        guard !self.sentContinue else { return }
        self.sentContinue = true
        context.writeAndFlush(self.wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .continue))), promise: nil)
    }

    private func perform(_ reply: ServerReply, for request: HTTPRequestHead, keepAlive: Bool, context: ChannelHandlerContext) {
        guard self.isActive else { return }
        switch reply {
        case .full(let status, _, _) where status.code < 200, .streamed(let status, _, _, _, _) where status.code < 200:
            // NIO treats a 1xx head as interim; a body after it would break the codec's invariants.
            self.perform(.text("A 1xx status cannot be a final response\n", status: .internalServerError), for: request, keepAlive: false, context: context)

        case .full(let status, let headers, let body):
            var headers = headers
            Self.frame(&headers, status: status, length: body.count, keepAlive: keepAlive)
            context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
            if request.method != .HEAD, !body.isEmpty {
                context.write(self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            }
            self.finish(keepAlive: keepAlive, context: context)

        case .streamed(let status, let headers, let chunks, let initialDelay, let interval):
            if request.method == .HEAD {
                self.perform(.full(status: status, headers: headers, body: []), for: request, keepAlive: keepAlive, context: context)
                return
            }
            var headers = headers
            if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
            let head = HTTPResponseHead(version: request.version, status: status, headers: headers)
            self.schedule(after: initialDelay, context: context) { [self] in
                context.writeAndFlush(self.wrapOutboundOut(.head(head)), promise: nil)
                self.sendChunks(chunks[...], interval: interval, keepAlive: keepAlive, context: context)
            }

        case .generated(let status, let headers, let length):
            var headers = headers
            Self.frame(&headers, status: status, length: length, keepAlive: keepAlive)
            context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
            if request.method == .HEAD || length == 0 {
                self.finish(keepAlive: keepAlive, context: context)
            } else {
                self.sendGenerated(from: 0, length: length, keepAlive: keepAlive, context: context)
            }

        case .delayed(let delay, let inner):
            self.schedule(after: delay, context: context) { [self] in
                self.perform(inner, for: request, keepAlive: keepAlive, context: context)
            }

        case .continueFirst(let inner):
            self.sendContinue(version: request.version, context: context)
            self.perform(inner, for: request, keepAlive: keepAlive, context: context)

        case .raw(let steps):
            self.state = .hijacked
            self.run(steps[...], context: context)

        case .webSocket(let response, let endpoint):
            self.state = .hijacked
            self.rawWriter.write(response)
            do {
                try TestWebSocketHandler.takeOver(
                    context.pipeline.syncOperations, from: self, endpoint: endpoint, rawWriter: self.rawWriter, registry: self.registry,
                    channel: context.channel)
            } catch {
                context.close(promise: nil)
            }
        }
    }

    /// Adds `Content-Length` (where a body is allowed) and `Connection: close` when closing.
    private static func frame(_ headers: inout HTTPHeaders, status: HTTPResponseStatus, length: Int, keepAlive: Bool) {
        let code = status.code
        if code >= 200, code != 204, code != 304, !headers.contains(name: "content-length") {
            headers.replaceOrAdd(name: "Content-Length", value: String(length))
        }
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        }
    }

    private func sendChunks(_ chunks: ArraySlice<[UInt8]>, interval: TimeAmount, keepAlive: Bool, context: ChannelHandlerContext) {
        var chunks = chunks
        while let chunk = chunks.popFirst() {
            let buffer = context.channel.allocator.buffer(bytes: chunk)
            context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            if interval > .zero, !chunks.isEmpty {
                self.schedule(after: interval, context: context) { [self, chunks] in
                    self.sendChunks(chunks, interval: interval, keepAlive: keepAlive, context: context)
                }
                return
            }
        }
        self.finish(keepAlive: keepAlive, context: context)
    }

    /// 65,520 = 26 × 2,520: every full chunk starts at a multiple of 26, so all are identical.
    private static let generatedChunk: [UInt8] = FaultEndpoints.pattern(65_520)

    private func sendGenerated(from offset: Int, length: Int, keepAlive: Bool, context: ChannelHandlerContext) {
        var offset = offset
        while offset < length {
            guard context.channel.isWritable, self.isActive else {
                self.pendingGenerated = (offset, length, keepAlive)
                context.flush()
                return
            }
            let count = min(Self.generatedChunk.count, length - offset)
            let buffer = context.channel.allocator.buffer(bytes: Self.generatedChunk[0..<count])
            context.write(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            offset += count
        }
        self.pendingGenerated = nil
        self.finish(keepAlive: keepAlive, context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let pending = self.pendingGenerated {
            self.pendingGenerated = nil
            self.sendGenerated(from: pending.offset, length: pending.length, keepAlive: pending.keepAlive, context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    /// Ends the response; closes the connection afterwards unless it is kept alive.
    private func finish(keepAlive: Bool, context: ChannelHandlerContext) {
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: promise)
        if keepAlive {
            self.state = .idle
        } else if case .ignoringBody = self.state {
            // The client may still be sending the body we refused. Closing now, with its bytes
            // unread, would make the kernel send RST and the client could lose our answer:
            // stop writing, keep reading (and dropping) for a while, then close.
            promise.futureResult.assumeIsolated().whenComplete { _ in
                self.closeAfterDraining(context: context)
            }
        } else {
            promise.futureResult.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }

    /// How long a refused body is drained before the connection is closed anyway.
    static let drainTime = TimeAmount.seconds(5)

    private func closeAfterDraining(context: ChannelHandlerContext) {
        let halfClosed = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: halfClosed)
        halfClosed.futureResult.assumeIsolated().whenComplete { result in
            guard case .success = result else {
                context.close(promise: nil)
                return
            }
            self.schedule(after: Self.drainTime, context: context) {
                context.close(promise: nil)
            }
        }
    }

    private func run(_ steps: ArraySlice<RawStep>, context: ChannelHandlerContext) {
        var steps = steps
        while let step = steps.popFirst() {
            guard self.isActive else { return }
            switch step {
            case .write(let bytes):
                self.rawWriter.write(bytes)
            case .wait(let delay):
                self.schedule(after: delay, context: context) { [self, steps] in
                    self.run(steps, context: context)
                }
                return
            case .close:
                context.close(promise: nil)
                return
            case .reset:
                ConnectionReset.reset(context)
                return
            case .stall:
                return
            }
        }
    }


    private func schedule(after delay: TimeAmount, context: ChannelHandlerContext, _ body: @escaping () -> Void) {
        guard delay > .zero else {
            body()
            return
        }
        self.pendingTask = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            self.pendingTask = nil
            guard self.isActive else { return }
            body()
        }
    }
}
