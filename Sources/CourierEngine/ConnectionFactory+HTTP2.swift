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

    /// The settings this client announces: no server push, the configured stream window and
    /// header-list limit.
    private var initialSettings: HTTP2Settings {
        [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .initialWindowSize, value: max(65_535, min(configuration.http2StreamWindowSize, Int(Int32.max)))),
            HTTP2Setting(parameter: .maxHeaderListSize, value: max(1024, configuration.http2MaximumHeaderListSize)),
        ]
    }

    /// Connects like the HTTP/1.1 path, but installs the HTTP pipeline only once the protocol
    /// is known: after the TLS handshake (ALPN), or at once for h2c prior knowledge. HTTP/2 is
    /// ready when the server's first SETTINGS arrived.
    func connectNegotiating(
        id: ConnectionPoolStateMachine.ConnectionID,
        key: ConnectionKey,
        addresses: [SocketAddress],
        connectHost: String,
        connectPort: Int,
        info: ConnectionInfo,
        deadline: NIODeadline
    ) async throws(EngineError) -> EstablishedConnection {
        let remaining = deadline - .now()
        let decompression: (maximumSize: Int, ratio: Int)?
        switch configuration.decompression {
        case .disabled: decompression = nil
        case .enabled(let ratio, let maximumSize): decompression = (maximumSize, ratio)
        }
        let useTLS = key.scheme == .https
        let sslContext = self.sslContext
        let verifier = configuration.tls.verifier
        let serverHostname: String? = (try? SocketAddress(ipAddress: key.host, port: 0)) == nil ? key.host : nil
        let host = key.host
        let port = key.port
        let setupErrorBox = SetupErrorBox()
        let proxy = key.proxy
        let socksTarget = try await socksTarget(for: key)
        let settings = initialSettings
        let windowSize = max(65_535, configuration.http2StreamWindowSize)
        let streamCap = configuration.maximumConcurrentStreamsPerConnection

        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(remaining)
            .resolver(PreResolvedAddresses(addresses: addresses, eventLoop: group.any()))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                do {
                    let sync = channel.pipeline.syncOperations
                    let setup = ConnectionSetupHandler(host: host, setupErrorBox: setupErrorBox, priorKnowledge: !useTLS) {
                        negotiated, context in
                        let sync = context.pipeline.syncOperations
                        switch negotiated {
                        case .http1:
                            try sync.addHandler(HTTPRequestEncoder())
                            let reasonPhrases = ReasonPhraseRecorder()  // the decoder drops the server's phrase
                            try sync.addHandler(reasonPhrases)
                            try sync.addHandler(
                                ByteToMessageHandler(
                                    HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)
                                )
                            )
                            if let decompression {
                                try sync.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(decompression.ratio)))
                            }
                            let handler = HTTP1ConnectionHandler(
                                host: host,
                                decompressionMaximumSize: decompression?.maximumSize,
                                setupErrorBox: setupErrorBox
                            )
                            handler.reasonPhrases = reasonPhrases
                            try sync.addHandler(handler)
                        case .http2:
                            let observer = HTTP2ConnectionObserver(host: host, streamCap: streamCap)
                            observer.setup = context.handler as? ConnectionSetupHandler
                            try sync.addHandler(HTTP2ReadSlicer())
                            try sync.addHandler(NIOHTTP2Handler(mode: .client, initialSettings: settings))
                            try sync.addHandler(observer)
                            try sync.addHandler(
                                HTTP2StreamMultiplexer(
                                    mode: .client,
                                    channel: context.channel,
                                    targetWindowSize: windowSize,
                                    outboundBufferSizeHighWatermark: 64 * 1024,
                                    outboundBufferSizeLowWatermark: 32 * 1024,
                                    inboundStreamInitializer: { pushed in
                                        // Push is disabled in our SETTINGS; refuse any pushed stream.
                                        pushed.eventLoop.makeFailedFuture(EngineError.protocolViolation("the server pushed a stream"))
                                    }
                                ))
                        }
                    }
                    try Self.addProxyHandshake(
                        sync, proxy: proxy, socksTarget: socksTarget, useTLS: useTLS, host: host, port: port,
                        setupErrorBox: setupErrorBox)
                    if useTLS, let sslContext {
                        let tlsHandler: NIOSSLClientHandler
                        if let verifier {
                            let loopSetup = NIOLoopBound(setup, eventLoop: channel.eventLoop)
                            tlsHandler = try NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname) {
                                certificates, promise in
                                let chain = certificates.compactMap { try? $0.toDERBytes() }
                                let eventLoop = channel.eventLoop
                                Task {
                                    let decision = await verifier.verify(chain: chain, host: host)
                                    eventLoop.execute {
                                        switch decision {
                                        case .trust:
                                            promise.succeed(.certificateVerified)
                                        case .reject(let reason):
                                            loopSetup.value.trustRejection = .serverTrustRejected(host: host, reason: reason)
                                            promise.succeed(.failed)
                                        }
                                    }
                                }
                            }
                        } else {
                            tlsHandler = try NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname)
                        }
                        try sync.addHandler(tlsHandler)
                    }
                    try sync.addHandler(setup)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }

        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: connectHost, port: connectPort).get()
        } catch let error as ChannelError {
            if case .connectTimeout = error { throw .timedOut(.connect) }
            throw .cannotConnect(host: proxy?.host ?? key.host, port: proxy?.port ?? key.port, reason: Self.viaProxy(proxy, "\(error)"))
        } catch {
            throw .cannotConnect(
                host: proxy?.host ?? key.host, port: proxy?.port ?? key.port, reason: Self.viaProxy(proxy, Self.describe(error)))
        }

        let tlsStart = Date()
        let baseInfo = info
        let ready: EventLoopFuture<EstablishedConnection> = channel.eventLoop.flatSubmit {
            let setup: ConnectionSetupHandler
            do {
                setup = try channel.pipeline.syncOperations.handler(type: ConnectionSetupHandler.self)
            } catch {
                return channel.eventLoop.makeFailedFuture(
                    setupErrorBox.value ?? EngineError.connectionLost("the connection closed during setup"))
            }
            let promise = channel.eventLoop.makePromise(of: ConnectionSetupHandler.Negotiated.self)
            let timeout = channel.eventLoop.scheduleTask(deadline: deadline) {
                // Recorded first: closing the channel makes the setup handler record "closed
                // during setup", and the recorded error is the one the caller gets.
                if setupErrorBox.value == nil { setupErrorBox.set(.timedOut(.connect)) }
                promise.fail(EngineError.timedOut(.connect))
                channel.close(promise: nil)
            }
            promise.futureResult.whenComplete { _ in timeout.cancel() }
            setup.waitUntilReady(promise: promise)
            return promise.futureResult.flatMapThrowing { negotiated -> EstablishedConnection in
                let connectEnd = Date()
                var info = baseInfo
                info.connectEnd = connectEnd
                if useTLS {
                    info.secureConnectionStart = tlsStart
                    info.secureConnectionEnd = connectEnd
                    if let tls = try? channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) {
                        info.tlsProtocolVersion = tls.tlsVersion.map(Self.describe)
                    }
                }
                info.localAddress = .init(ip: channel.localAddress?.ipAddress, port: channel.localAddress?.port)
                info.remoteAddress = .init(ip: channel.remoteAddress?.ipAddress, port: channel.remoteAddress?.port)
                let sync = channel.pipeline.syncOperations
                switch negotiated {
                case .http1:
                    let handler = try sync.handler(type: HTTP1ConnectionHandler.self)
                    handler.info = info
                    return .http1(
                        HTTP1Connection(id: id, key: key, channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop)))
                case .http2:
                    let observer = try sync.handler(type: HTTP2ConnectionObserver.self)
                    let multiplexer = try sync.handler(type: HTTP2StreamMultiplexer.self)
                    return .http2(
                        HTTP2Connection(
                            id: id, key: key, channel: channel, multiplexer: NIOLoopBound(multiplexer, eventLoop: channel.eventLoop),
                            observer: NIOLoopBound(observer, eventLoop: channel.eventLoop),
                            settings: .init(host: host, isTLS: useTLS, info: info, decompression: decompression)))
                }
            }
        }
        do {
            return try await ready.get()
        } catch {
            channel.close(promise: nil)
            throw setupErrorBox.value ?? EngineErrorMapping.map(error, host: key.host)
        }
    }
}
