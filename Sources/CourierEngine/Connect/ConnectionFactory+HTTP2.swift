import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOPosix
import NIOSSL

/// A connection the factory opened: HTTP/1.1 (one request at a time) or HTTP/2 (streams).
enum EstablishedConnection: Sendable {
    case http1(HTTP1Connection)
    case http2(HTTP2Connection)
}

extension ConnectionFactory {
    /// Whether connections for `key` may speak HTTP/2 under this configuration.
    func mayUseHTTP2(_ key: ConnectionKey) -> Bool {
        switch configuration.httpVersion {
        case .http1Only: return false
        case .automatic: return key.scheme == .https
        case .http2PriorKnowledge: return key.scheme == .https || key.proxy == nil || key.proxy?.kind != .http
        }
    }

    /// The configured stream window (also the connection's), between the protocol's initial
    /// 65,535 and 1 GiB. Not up to the protocol's 2^31 - 1: NIOHTTP2 adds the SETTINGS change
    /// (this size - 65,535) to the target of a stream already open when the server
    /// acknowledges our SETTINGS, and traps on an Int32 overflow past 1 GiB.
    private var http2WindowSize: Int {
        max(65_535, min(configuration.http2StreamWindowSize, 1 << 30))
    }

    /// The settings this client announces: no server push, the configured stream window and
    /// header-list limit, each brought into its protocol range (a SETTINGS value is 32 bits;
    /// `HTTP2Setting` traps on a larger one).
    private var initialSettings: HTTP2Settings {
        [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .initialWindowSize, value: http2WindowSize),
            HTTP2Setting(
                parameter: .maxHeaderListSize, value: max(1024, min(configuration.http2MaximumHeaderListSize, Int(UInt32.max)))),
        ]
    }

    /// Connects like the HTTP/1.1 path, but installs the HTTP pipeline only once the protocol
    /// is known: after the TLS handshake (ALPN), or at once for h2c prior knowledge. HTTP/2 is
    /// ready when the server's first SETTINGS arrived.
    func connectNegotiating(
        id: ConnectionPoolStateMachine.ConnectionID,
        key: ConnectionKey,
        destination: Destination,
        info: ConnectionInfo,
        deadline: NIODeadline,
        loop: (any EventLoop)?,
        progress: ConnectionSetupProgress?
    ) async throws(EngineError) -> EstablishedConnection {
        let remaining = deadline - .now()
        let decompression = decompressionLimits
        let useTLS = key.scheme == .https
        let sslContext = self.sslContext
        let verifier = configuration.tls.verifier
        let host = key.host
        let setupErrorBox = SetupErrorBox()
        let socksTarget = try await socksTarget(for: key, deadline: deadline, loop: loop)
        let settings = initialSettings
        let windowSize = http2WindowSize
        let streamCap = configuration.maximumConcurrentStreamsPerConnection

        let attempts = ConnectAttemptLog()
        let bootstrap = makeBootstrap(destination: destination, connectTimeout: remaining, loop: loop)
            .channelInitializer(
                Self.pipelineInitializer(attempts: attempts) { channel, sync in
                    let setup = ConnectionSetupHandler(host: host, setupErrorBox: setupErrorBox, priorKnowledge: !useTLS) {
                        negotiated, context in
                        let sync = context.pipeline.syncOperations
                        switch negotiated {
                        case .http1:
                            let handler = HTTP1ConnectionHandler(
                                host: host,
                                decompressionMaximumSize: decompression?.maximumSize,
                                setupErrorBox: setupErrorBox
                            )
                            try Self.addHTTP1Handlers(sync, handler: handler, decompressionRatio: decompression?.ratio)
                        case .http2:
                            let observer = HTTP2ConnectionObserver(host: host, streamCap: streamCap)
                            observer.setup = context.handler as? ConnectionSetupHandler
                            try sync.addHandler(HTTP2ReadSlicer())
                            try sync.addHandler(HTTP2FlushCoalescer())
                            var connection = NIOHTTP2Handler.ConnectionConfiguration()
                            connection.initialSettings = settings
                            connection.targetWindowSize = windowSize
                            var stream = NIOHTTP2Handler.StreamConfiguration()
                            stream.targetWindowSize = windowSize
                            stream.outboundBufferSizeHighWatermark = 64 * 1024
                            stream.outboundBufferSizeLowWatermark = 32 * 1024
                            // The inline multiplexer: streams hang off NIOHTTP2Handler itself,
                            // with no multiplexer handler for every frame and event to cross.
                            try sync.addHandler(
                                NIOHTTP2Handler(
                                    mode: .client, eventLoop: context.eventLoop, connectionConfiguration: connection,
                                    streamConfiguration: stream
                                ) { pushed in
                                    // Push is disabled in our SETTINGS; refuse any pushed stream.
                                    pushed.eventLoop.makeFailedFuture(EngineError.protocolViolation("the server pushed a stream"))
                                })
                            try sync.addHandler(observer)
                        }
                    }
                    let loopSetup = NIOLoopBound(setup, eventLoop: channel.eventLoop)
                    try Self.addProxyAndTLSHandlers(
                        sync, channel: channel, key: key, socksTarget: socksTarget, sslContext: sslContext, verifier: verifier,
                        setupErrorBox: setupErrorBox, progress: progress,
                        recordTrust: { loopSetup.value.trustedChain = $0 }
                    ) { loopSetup.value.trustRejection = $0 }
                    try sync.addHandler(setup)
                })

        let channel = try await Self.openChannel(bootstrap, destination: destination, key: key)

        let tlsStart = Date()
        let baseInfo = info
        let ready = Self.withSetupHandler(ConnectionSetupHandler.self, on: channel, setupErrorBox: setupErrorBox) { setup in
            let promise = Self.makeReadyPromise(
                of: ConnectionSetupHandler.Negotiated.self, channel: channel, deadline: deadline, setupErrorBox: setupErrorBox)
            setup.waitUntilReady(promise: promise)
            let boundSetup = NIOLoopBound(setup, eventLoop: channel.eventLoop)
            return promise.futureResult.flatMapThrowing { negotiated -> EstablishedConnection in
                try Self.checkNameAfterOverride(
                    channel: channel, host: host, destination: destination, useTLS: useTLS, verifier: verifier, setupErrorBox: setupErrorBox)
                var info = Self.readyInfo(baseInfo, channel: channel, useTLS: useTLS, tlsStart: tlsStart, attempts: attempts)
                info.trustedChainDER = boundSetup.value.trustedChain
                let sync = channel.pipeline.syncOperations
                switch negotiated {
                case .http1:
                    let handler = try sync.handler(type: HTTP1ConnectionHandler.self)
                    handler.info = info
                    return .http1(
                        HTTP1Connection(id: id, key: key, channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop)))
                case .http2:
                    let observer = try sync.handler(type: HTTP2ConnectionObserver.self)
                    let multiplexer = try sync.handler(type: NIOHTTP2Handler.self).syncMultiplexer()
                    return .http2(
                        HTTP2Connection(
                            id: id, key: key, channel: channel, multiplexer: NIOLoopBound(multiplexer, eventLoop: channel.eventLoop),
                            observer: NIOLoopBound(observer, eventLoop: channel.eventLoop),
                            settings: .init(host: host, isTLS: useTLS, info: info, decompression: decompression)))
                }
            }
        }
        return try await Self.awaitReady(ready, channel: channel, setupErrorBox: setupErrorBox, host: key.host)
    }
}
