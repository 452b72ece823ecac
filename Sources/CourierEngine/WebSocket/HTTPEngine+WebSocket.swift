import Foundation
public import NIOCore
public import NIOHTTP1
import NIOHTTPCompression
import NIOWebSocket

/// What a WebSocket opening handshake came to.
public enum WebSocketOpening: Sendable {
    /// The server switched protocols: the socket is open.
    case opened(WebSocketConnection)
    /// The server answered something else (a 401, a redirect, a 404): its head and body (up
    /// to 64 KiB), and the timings. The connection is closed.
    case refused(head: HTTPResponseHead, body: ByteBuffer, metrics: EngineMetrics)
}

extension HTTPEngine {
    /// Opens a WebSocket to `request.url` (`ws`, `wss`, or `http`/`https` standing for them).
    ///
    /// When the engine already has an HTTP/2 connection to the origin whose server allows
    /// extended CONNECT (`SETTINGS_ENABLE_CONNECT_PROTOCOL`), and
    /// ``WebSocketOptions/allowsHTTP2`` is on, the socket is a stream of that connection (RFC
    /// 8441), with HTTP/2 flow control; it holds one of the connection's streams until it
    /// closes. Otherwise (or when that stream ends before the server answers) it opens a new
    /// HTTP/1.1 connection and upgrades it (RFC 6455 §4), through the engine's proxy, TLS
    /// settings and verifier, as a request would; that connection belongs to the socket, not
    /// the pool.
    ///
    /// `request.headers` go with the handshake (the handshake's own fields replace any of
    /// theirs); `request.deadline` (else `idleTimeout`, else the configuration's) bounds the
    /// connect and the handshake together. The request's method and body are not used.
    ///
    /// - Throws: ``EngineError`` when no connection could be made (as for a request), or
    ///   ``WebSocketError/handshakeFailed(_:)`` for a `101` that does not complete the handshake.
    public func openWebSocket(_ request: EngineRequest, options: WebSocketOptions = .init()) async throws -> WebSocketOpening {
        // A frame is at most 2^32-1 bytes to NIO's decoder (it traps past that); at least 1.
        var bounded = options
        bounded.maximumMessageSize = min(max(1, options.maximumMessageSize), Int(UInt32.max))
        let options = bounded
        let url = try Self.httpURL(forWebSocket: request.url)
        let target = configuration.routed(try RequestTarget(url: url))
        let proxy = try configuration.proxy(for: target)
        let key = ConnectionKey(target, proxy: proxy)
        let fetchStart = Date()
        let deadline = request.deadline ?? .now() + (request.idleTimeout ?? configuration.connectTimeout)
        let handshake = WebSocketHandshake(protocols: options.protocols, offersDeflate: options.perMessageDeflate)
        var requestHead = HTTP1ConnectionHandler.makeHead(for: request, target: target, bodyLength: nil, hasBody: false)
        requestHead.method = .GET
        try handshake.apply(to: &requestHead.headers)
        let head = requestHead

        if options.allowsHTTP2, let http2 = pool.leaseExtendedConnectStream(for: key),
            let opening = try await openWebSocketStream(
                on: http2, head: head, handshake: handshake, scheme: key.scheme.rawValue, options: options,
                deadline: deadline, fetchStart: fetchStart)
        {
            return opening
        }
        // On the caller's own event loop when it runs on one (a task on `taskExecutor`), as the
        // pool does for requests: the socket's messages then never change threads.
        let factory = try webSocketFactory()
        let connection = try await factory.makeConnection(
            id: .init(raw: -1), key: key, deadline: min(deadline, .now() + configuration.connectTimeout), loop: factory.group.any())
        guard case .http1(let http1) = connection else {
            throw EngineError.protocolViolation("the WebSocket connection did not speak HTTP/1.1")
        }
        let channel = http1.channel
        let inbox = WebSocketInbox { [channel] in
            channel.eventLoop.execute {
                (try? channel.pipeline.syncOperations.handler(type: WebSocketChannelHandler.self))?.resumeReading()
            }
        }
        let started = channel.eventLoop.flatSubmit { () -> EventLoopFuture<(WebSocketHandshakeHandler.Outcome, ConnectionInfo)> in
            let promise = channel.eventLoop.makePromise(of: WebSocketHandshakeHandler.Outcome.self)
            let timeout = channel.eventLoop.scheduleTask(deadline: deadline) {
                promise.fail(EngineError.timedOut(.idle))
                channel.close(promise: nil)
            }
            promise.futureResult.whenComplete { _ in timeout.cancel() }
            return Self.replaceHTTPHandlers(on: channel, head: head, handshake: handshake, promise: promise) { agreement in
                [
                    ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: options.maximumMessageSize)),
                    WebSocketFrameEncoder(),
                    try WebSocketChannelHandler(options: options, deflate: agreement.deflate, inbox: inbox),
                ]
            }.flatMap { info in
                promise.futureResult.map { ($0, info) }
            }.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }
        }
        let (outcome, info) = try await started.get()
        var metrics = Self.openingMetrics(fetchStart: fetchStart, info: info)
        switch outcome {
        case .upgraded(let response, let agreement, let requestStart):
            metrics.requestStart = Date(timeIntervalSinceNow: -Double((NIODeadline.now() - requestStart).nanoseconds) / 1e9)
            metrics.responseStart = Date()
            metrics.responseEnd = metrics.responseStart
            return .opened(
                WebSocketConnection(
                    channel: channel, inbox: inbox, requestHead: head, responseHead: response, agreement: agreement, metrics: metrics))
        case .refused(let response, let body):
            metrics.responseEnd = Date()
            metrics.responseBodyBytesReceived = Int64(body.readableBytes)
            return .refused(head: response, body: body, metrics: metrics)
        }
    }

    /// `url` with `ws` as `http` and `wss` as `https`; `http` and `https` as they are.
    static func httpURL(forWebSocket url: URL) throws(EngineError) -> URL {
        guard let scheme = url.scheme?.lowercased() else { throw .invalidURL(url.absoluteString) }
        switch scheme {
        case "http", "https":
            return url
        case "ws", "wss":
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { throw .invalidURL(url.absoluteString) }
            components.scheme = scheme == "ws" ? "http" : "https"
            guard let mapped = components.url else { throw .invalidURL(url.absoluteString) }
            return mapped
        default:
            throw .unsupportedScheme(scheme)
        }
    }

    /// Takes the request pipeline's HTTP handlers out and, once they are gone (a decoder leaves
    /// on a later turn of the loop), puts the handshake's in: an encoder, a decoder that forwards
    /// the bytes after the `101`, and the handshake handler, which sends the request as it is
    /// added. The connection's setup timings. On the event loop.
    private static func replaceHTTPHandlers(
        on channel: any Channel, head: HTTPRequestHead, handshake: WebSocketHandshake,
        promise: EventLoopPromise<WebSocketHandshakeHandler.Outcome>,
        makeHandlers: @escaping (WebSocketHandshake.Agreement) throws -> [any ChannelHandler]
    ) -> EventLoopFuture<ConnectionInfo> {
        let sync = channel.pipeline.syncOperations
        let info: ConnectionInfo
        var removals: [EventLoopFuture<Void>] = []
        do {
            info = try sync.handler(type: HTTP1ConnectionHandler.self).info
            removals.append(try sync.removeHandler(context: sync.context(handlerType: HTTP1ConnectionHandler.self)))
            if let decompressor = try? sync.context(handlerType: NIOHTTPResponseDecompressor.self) {
                removals.append(sync.removeHandler(context: decompressor))
            }
            removals.append(try sync.removeHandler(context: sync.context(handlerType: ByteToMessageHandler<HTTPResponseDecoder>.self)))
            removals.append(try sync.removeHandler(context: sync.context(handlerType: ReasonPhraseRecorder.self)))
            removals.append(try sync.removeHandler(context: sync.context(handlerType: HTTPRequestEncoder.self)))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let handshakeHandler = NIOLoopBound(
            WebSocketHandshakeHandler(head: head, handshake: handshake, promise: promise, makeHandlers: makeHandlers),
            eventLoop: channel.eventLoop)
        return EventLoopFuture.andAllSucceed(removals, on: channel.eventLoop).flatMapThrowing {
            let sync = channel.pipeline.syncOperations
            try sync.addHandler(HTTPRequestEncoder())
            try sync.addHandler(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)))
            try sync.addHandler(handshakeHandler.value)
            return info
        }
    }

    private static func openingMetrics(fetchStart: Date, info: ConnectionInfo) -> EngineMetrics {
        var metrics = EngineMetrics(fetchStart: fetchStart)
        metrics.record(info, includingSetup: true)
        metrics.networkProtocolName = "http/1.1"
        return metrics
    }
}
