import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL

/// The steps both connection paths share (HTTP/1.1 only, and negotiating HTTP/2): the
/// bootstrap, the TCP connect, the TLS handler with the verification hook, the HTTP/1.1
/// handlers, and the wait for the connection to be ready within the connect deadline.
extension ConnectionFactory {
    /// The configured response decompression limits; nil when decompression is disabled.
    var decompressionLimits: (maximumSize: Int, ratio: Int)? {
        switch configuration.decompression {
        case .disabled: return nil
        case .enabled(let ratio, let maximumSize): return (maximumSize, ratio)
        }
    }

    /// A bootstrap that races the destination's addresses (Happy Eyeballs) for at most
    /// `connectTimeout`, with Nagle off (not for a Unix domain socket, which has no Nagle). The
    /// caller adds its channel initializer.
    /// `loop`: the event loop the connection must live on; nil lets the group pick. The
    /// addresses are handed over on that same loop (the connector would hop to it otherwise).
    func makeBootstrap(destination: Destination, connectTimeout: TimeAmount, loop: (any EventLoop)?) -> ClientBootstrap {
        let loop = loop ?? group.next()
        let bootstrap = ClientBootstrap(group: loop).connectTimeout(connectTimeout)
        guard destination.socketPath == nil else { return bootstrap }
        return bootstrap
            .resolver(PreResolvedAddresses(addresses: destination.addresses, eventLoop: loop))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
    }

    /// A channel initializer that runs `addHandlers` with the new channel's pipeline and
    /// reports what it throws as the channel's setup failure. On the channel's event loop.
    static func pipelineInitializer(
        attempts: ConnectAttemptLog,
        _ addHandlers: @escaping @Sendable (any Channel, ChannelPipeline.SynchronousOperations) throws -> Void
    ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        { channel in
            do {
                try channel.pipeline.syncOperations.addHandler(ConnectAttemptProbe(log: attempts))
                try addHandlers(channel, channel.pipeline.syncOperations)
                return channel.eventLoop.makeSucceededVoidFuture()
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }
    }

    /// Connects `bootstrap` to the destination: `timedOut(.connect)` when the connect deadline
    /// runs out, otherwise `cannotConnect` naming the proxy (if any) or the origin, and where
    /// the connection went when that was not the origin's own address (a socket, an override).
    static func openChannel(
        _ bootstrap: ClientBootstrap, destination: Destination, key: ConnectionKey
    ) async throws(EngineError) -> any Channel {
        let proxy = key.proxy
        func failure(_ reason: String) -> EngineError {
            var reason = viaProxy(proxy, reason)
            if destination.socketPath != nil || destination.addressOverride != nil { reason += " (connecting to \(destination.summary))" }
            return .cannotConnect(host: proxy?.host ?? key.host, port: proxy?.port ?? key.port, reason: reason)
        }
        do {
            if let socketPath = destination.socketPath {
                return try await bootstrap.connect(unixDomainSocketPath: socketPath).get()
            }
            return try await bootstrap.connect(host: destination.host, port: destination.port).get()
        } catch let error as ChannelError {
            if case .connectTimeout = error { throw .timedOut(.connect) }
            throw failure("\(error)")
        } catch {
            throw failure(describe(error))
        }
    }

    /// The TLS client handler for `host` (SNI unless `host` is an IP address). With a
    /// `verifier`, the verifier decides trust; its rejection goes to `recordRejection` (on the
    /// channel's event loop) before the handshake fails, so the connection reports it, and the
    /// chain it trusted to `recordTrust` (on the event loop too).
    static func makeTLSHandler(
        context sslContext: NIOSSLContext,
        verifier: (any ServerTrustVerifier)?,
        host: String,
        channel: any Channel,
        recordRejection: @escaping @Sendable (EngineError) -> Void,
        recordTrust: @escaping @Sendable ([[UInt8]]) -> Void = { _ in }
    ) throws -> NIOSSLClientHandler {
        let serverHostname: String? = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
        guard let verifier else {
            return try NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname)
        }
        return try NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname) { certificates, promise in
            let chain = certificates.compactMap { try? $0.toDERBytes() }
            let eventLoop = channel.eventLoop
            Task {
                let decision = await verifier.verify(chain: chain, host: host)
                eventLoop.execute {
                    switch decision {
                    case .trust:
                        recordTrust(chain)
                        promise.succeed(.certificateVerified)
                    case .reject(let reason):
                        recordRejection(.serverTrustRejected(host: host, reason: reason, chain: chain))
                        promise.succeed(.failed)
                    }
                }
            }
        }
    }

    /// Adds what comes before the HTTP handlers, for both connect paths: the proxy's handshake
    /// (SOCKS5, or a `CONNECT` tunnel for https through an HTTP proxy), then TLS for https,
    /// whose trust rejection goes to `recordRejection` (on the channel's event loop).
    /// `progress`, when given, is advanced as the TCP connect and the proxy's handshake end.
    /// `tunnelsPlainHTTP`: plain http through an HTTP proxy is tunnelled too (a WebSocket's).
    static func addProxyAndTLSHandlers(
        _ sync: ChannelPipeline.SynchronousOperations,
        channel: any Channel,
        key: ConnectionKey,
        socksTarget: SOCKS5ClientHandler.Target?,
        tunnelsPlainHTTP: Bool = false,
        sslContext: NIOSSLContext?,
        verifier: (any ServerTrustVerifier)?,
        setupErrorBox: SetupErrorBox,
        progress: ConnectionSetupProgress?,
        recordTrust: @escaping @Sendable ([[UInt8]]) -> Void = { _ in },
        recordRejection: @escaping @Sendable (EngineError) -> Void
    ) throws {
        let useTLS = key.scheme == .https
        let hasProxyHandshake = key.proxy != nil && (socksTarget != nil || useTLS || tunnelsPlainHTTP)
        if let progress {
            let next: ConnectionSetupPhase = hasProxyHandshake ? .proxyHandshake : useTLS ? .tlsHandshake : .established
            try sync.addHandler(SetupPhaseProbe(progress: progress, phase: next))
        }
        try addProxyHandshake(
            sync, proxy: key.proxy, socksTarget: socksTarget, useTLS: useTLS || tunnelsPlainHTTP, host: key.host, port: key.port,
            setupErrorBox: setupErrorBox)
        if let progress, hasProxyHandshake {
            try sync.addHandler(SetupPhaseProbe(progress: progress, phase: useTLS ? .tlsHandshake : .established))
        }
        if useTLS, let sslContext {
            try sync.addHandler(
                makeTLSHandler(
                    context: sslContext, verifier: verifier, host: key.host, channel: channel, recordRejection: recordRejection,
                    recordTrust: recordTrust))
        }
    }

    /// Adds the HTTP/1.1 handlers (after TLS, if any): the request encoder, the reason-phrase
    /// recorder (the decoder drops the server's phrase), the response decoder, the
    /// decompressor when `decompressionRatio` is set, and `handler` last.
    static func addHTTP1Handlers(
        _ sync: ChannelPipeline.SynchronousOperations, handler: HTTP1ConnectionHandler, decompressionRatio: Int?
    ) throws {
        try sync.addHandler(HTTPRequestEncoder())
        let reasonPhrases = ReasonPhraseRecorder()
        handler.reasonPhrases = reasonPhrases
        try sync.addHandler(reasonPhrases)
        try sync.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)
            )
        )
        if let decompressionRatio {
            try sync.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(decompressionRatio)))
        }
        try sync.addHandler(handler)
    }

    /// Runs `body` on the channel's event loop with its `Handler` (the one that reports the
    /// connection ready). When the handler is gone (the channel closed during setup), fails
    /// with the recorded setup error, or "closed during setup".
    static func withSetupHandler<Handler: ChannelHandler & SendableMetatype, Value: Sendable>(
        _ type: Handler.Type, on channel: any Channel, setupErrorBox: SetupErrorBox,
        _ body: @escaping @Sendable (Handler) -> EventLoopFuture<Value>
    ) -> EventLoopFuture<Value> {
        channel.eventLoop.flatSubmit {
            guard let handler = try? channel.pipeline.syncOperations.handler(type: Handler.self) else {
                return channel.eventLoop.makeFailedFuture(
                    setupErrorBox.value ?? EngineError.connectionLost("the connection closed during setup"))
            }
            return body(handler)
        }
    }

    /// A promise for the connection being ready that fails with `timedOut(.connect)` and
    /// closes the channel when `deadline` comes first. On the channel's event loop.
    static func makeReadyPromise<Value>(
        of type: Value.Type, channel: any Channel, deadline: NIODeadline, setupErrorBox: SetupErrorBox
    ) -> EventLoopPromise<Value> {
        let promise = channel.eventLoop.makePromise(of: type)
        let timeout = channel.eventLoop.scheduleTask(deadline: deadline) {
            // Recorded first: closing the channel makes the setup handlers record "closed
            // during setup", and the recorded error is the one the caller gets.
            if setupErrorBox.value == nil { setupErrorBox.set(.timedOut(.connect)) }
            promise.fail(EngineError.timedOut(.connect))
            channel.close(promise: nil)
        }
        promise.futureResult.whenComplete { _ in timeout.cancel() }
        return promise
    }

    /// Throws (recording it in `setupErrorBox`) ``EngineError/serverTrustRejected(host:reason:chain:)``
    /// when an override chose the address of a TLS connection checked by NIOSSL alone and the
    /// certificate doesn't name `host` (see ``OverriddenAddressNameCheck``). On the event loop.
    static func checkNameAfterOverride(
        channel: any Channel, host: String, destination: Destination, useTLS: Bool, verifier: (any ServerTrustVerifier)?,
        setupErrorBox: SetupErrorBox
    ) throws {
        guard useTLS, verifier == nil, destination.addressOverride != nil, IPAddressBytes(host) == nil,
            let problem = OverriddenAddressNameCheck.problem(channel: channel, host: host)
        else { return }
        let error = EngineError.serverTrustRejected(host: host, reason: problem)
        setupErrorBox.set(error)
        throw error
    }

    /// `info` completed now that the connection is ready: connect (and TLS) end, the TLS
    /// version, both addresses. On the channel's event loop.
    static func readyInfo(
        _ info: ConnectionInfo, channel: any Channel, useTLS: Bool, tlsStart: Date, attempts: ConnectAttemptLog
    ) -> ConnectionInfo {
        let connectEnd = Date()
        var info = info
        info.connectAttempts = attempts.ended
        info.connectEnd = connectEnd
        if useTLS {
            info.secureConnectionStart = tlsStart
            info.secureConnectionEnd = connectEnd
            if let tls = try? channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self) {
                info.tlsProtocolVersion = tls.tlsVersion.map(describe)
            }
        }
        info.localAddress = .init(ip: channel.localAddress?.ipAddress, port: channel.localAddress?.port)
        // A Unix domain socket's address is its path.
        let remote = channel.remoteAddress
        info.remoteAddress = .init(ip: remote?.ipAddress ?? remote?.pathname, port: remote?.port)
        return info
    }

    /// Waits for `ready`; on failure closes the channel and throws the recorded setup error
    /// first (a trust rejection, a proxy refusal, the connect timeout), else the mapped one.
    static func awaitReady<Value: Sendable>(
        _ ready: EventLoopFuture<Value>, channel: any Channel, setupErrorBox: SetupErrorBox, host: String
    ) async throws(EngineError) -> Value {
        do {
            return try await ready.get()
        } catch {
            channel.close(promise: nil)
            throw setupErrorBox.value ?? EngineErrorMapping.map(error, host: host)
        }
    }
}
