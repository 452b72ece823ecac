import NIOCore
import NIOHTTP1
import NIOHTTP2
import Synchronization

/// Builds a server connection's HTTP pipeline once its protocol is known: HTTP/1.1 (the codec,
/// the raw writer for faults, ``HTTPConnectionHandler``) or HTTP/2 (each stream gets the
/// HTTP/2-to-HTTP/1 codec in front of the same ``HTTPConnectionHandler``, so every endpoint
/// answers on both; ``HTTP2FaultHandler`` serves the `/h2/…` fault endpoints, and
/// ``WebSocketStreamAcceptor`` the WebSocket endpoints as extended-CONNECT streams).
struct ServerPipeline: Sendable {
    let router: RequestRouter
    let registry: ConnectionRegistry
    let scheme: String
    let http2: TestServer.HTTP2Options?

    /// Must run on the channel's event loop.
    func configureHTTP1(_ channel: any Channel) throws {
        let pipeline = channel.pipeline.syncOperations
        let rawWriter = RawWriter()
        try pipeline.addHandler(rawWriter)
        try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
        try pipeline.addHandler(HTTPConnectionHandler(router: router, rawWriter: rawWriter, registry: registry, scheme: scheme))
    }

    /// Must run on the channel's event loop.
    func configureHTTP2(_ channel: any Channel) throws {
        let options = http2 ?? TestServer.HTTP2Options()
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: max(0, options.maximumConcurrentStreams)),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 20),
            HTTP2Setting(parameter: .initialWindowSize, value: max(0, min(options.initialWindowSize, Int(Int32.max)))),
        ]
        if options.webSockets {
            connection.initialSettings.append(HTTP2Setting(parameter: .enableConnectProtocol, value: 1))
        }
        // Tests reset and refuse many streams on purpose.
        connection.maximumConnectionGlitches = 100_000
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.targetWindowSize = max(1, options.initialWindowSize)
        stream.outboundBufferSizeHighWatermark = 64 * 1024
        stream.outboundBufferSizeLowWatermark = 32 * 1024
        stream.streamResetFrameRateLimit.maximumCount = 100_000
        stream.streamErrorRateLimit.maximumCount = 100_000
        let streams = StreamCounter()
        let (router, registry, scheme) = (self.router, self.registry, self.scheme)
        let goAwayAfter = options.goAwayAfterStreams
        let webSockets = options.webSockets
        let rawWriter = RawWriter()
        try channel.pipeline.syncOperations.addHandler(rawWriter)
        let loopRawWriter = NIOLoopBound(rawWriter, eventLoop: channel.eventLoop)
        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: connection,
            streamConfiguration: stream
        ) { streamChannel in
            streamChannel.eventLoop.makeCompletedFuture {
                let number = streams.next()
                let sync = streamChannel.pipeline.syncOperations
                // After a GOAWAY, the server refuses every later stream without processing it.
                let refused = goAwayAfter.map { number > $0 } ?? false
                if webSockets {
                    try sync.addHandler(WebSocketStreamAcceptor(registry: registry, scheme: scheme))
                }
                try sync.addHandler(HTTP2FaultHandler(registry: registry, rawWriter: loopRawWriter.value, refuse: refused))
                try sync.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try sync.addHandler(
                    HTTPConnectionHandler(router: router, rawWriter: RawWriter(), registry: registry, scheme: scheme))
                if let goAwayAfter, number == goAwayAfter,
                    let streamID = try? streamChannel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
                {
                    // GOAWAY naming this stream as the last one processed: the client learns
                    // that every later stream was not, and the fault handler refuses each
                    // later stream with REFUSED_STREAM. Written as raw bytes below NIOHTTP2,
                    // not through it: NIOHTTP2 1.46, once it has sent GOAWAY itself, ignores
                    // the HEADERS of later streams but answers their DATA frames with a
                    // connection error (`noSuchStream`), after which it reads nothing more, so
                    // a client that sent several streams' HEADERS before their bodies (a
                    // legal and common order) lost the bodies of the streams it had processed.
                    loopRawWriter.value.write(Self.goAwayFrame(lastStreamID: Int(streamID)))
                }
            }
        }
        try channel.pipeline.syncOperations.addHandler(HTTP2ConnectionCreditRecorder(registry: registry))
    }
}

/// After the HTTP/2 handler, where connection-level frames arrive: adds up the flow-control
/// credit the client grants the whole connection (`WINDOW_UPDATE` on stream 0).
final class HTTP2ConnectionCreditRecorder: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private let registry: ConnectionRegistry

    init(registry: ConnectionRegistry) {
        self.registry = registry
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.streamID == .rootStream, case .windowUpdate(let increment) = frame.payload {
            registry.http2ConnectionCreditReceived(increment)
        }
        context.fireChannelRead(data)
    }
}

extension ServerPipeline {
    /// A GOAWAY frame (RFC 9113 §6.8) with NO_ERROR naming `lastStreamID`.
    static func goAwayFrame(lastStreamID: Int) -> [UInt8] {
        let id = UInt32(truncatingIfNeeded: lastStreamID) & 0x7FFF_FFFF
        return [0, 0, 8, 0x7, 0, 0, 0, 0, 0]
            + [UInt8(id >> 24), UInt8(truncatingIfNeeded: id >> 16), UInt8(truncatingIfNeeded: id >> 8), UInt8(truncatingIfNeeded: id)]
            + [0, 0, 0, 0]
    }
}

/// Counts a connection's streams (on its event loop, but the initializer is `@Sendable`).
final class StreamCounter: Sendable {
    private let count = Mutex(0)

    /// Counts a stream; returns its number on the connection (1 for the first).
    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
