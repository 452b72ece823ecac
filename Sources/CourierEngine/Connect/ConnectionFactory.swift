import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOPosix
import NIOSSL

/// Opens connections: DNS, TCP (the resolved addresses raced by NIO's Happy Eyeballs
/// connector, RFC 8305), TLS with the verification hook, and the HTTP/1.1 pipeline. Records
/// the timings of each phase. Over TLS, ALPN offers `h2` too (unless the configuration says
/// HTTP/1.1 only) and the pipeline for the protocol the server picks is installed after the
/// handshake; h2c prior knowledge installs HTTP/2 at once.
struct ConnectionFactory: Sendable {
    let configuration: EngineConfiguration
    let group: any EventLoopGroup
    let sslContext: NIOSSLContext?
    private let usesCustomVerifier: Bool
    /// Whether plain http goes through an HTTP proxy in a `CONNECT` tunnel, as https does,
    /// rather than as absolute-form requests: a WebSocket needs the tunnel (the connection
    /// carries frames after its handshake, which a forwarding proxy would not pass on).
    var tunnelsPlainHTTP = false

    init(configuration: EngineConfiguration, group: any EventLoopGroup) throws(EngineError) {
        self.configuration = configuration
        self.group = group
        self.usesCustomVerifier = configuration.tls.verifier != nil
        do {
            self.sslContext = try NIOSSLContext(
                configuration: Self.makeTLSConfiguration(configuration.tls, httpVersion: configuration.httpVersion))
        } catch {
            throw .tlsHandshakeFailed("invalid TLS configuration: \(error)")
        }
    }

    static func makeTLSConfiguration(
        _ tls: EngineTLSConfiguration, httpVersion: EngineConfiguration.HTTPVersionPolicy = .http1Only
    ) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = tls.minimumTLSVersion
        switch httpVersion {
        case .http1Only: configuration.applicationProtocols = ["http/1.1"]
        case .automatic: configuration.applicationProtocols = ["h2", "http/1.1"]
        case .http2PriorKnowledge: configuration.applicationProtocols = ["h2"]
        }
        // Parsed once; trusted alone, or beside the system store.
        let extra = try tls.additionalTrustRootsDER.enumerated().map { index, der in
            try load("additional trust root #\(index + 1) is not a DER certificate") { try NIOSSLCertificate(bytes: der, format: .der) }
        }
        switch (tls.trustsSystemRoots, extra.isEmpty) {
        case (true, true):
            configuration.trustRoots = .default
        case (true, false):
            configuration.trustRoots = .default
            configuration.additionalTrustRoots = [.certificates(extra)]
        case (false, _):
            configuration.trustRoots = .certificates(extra)
        }
        if tls.verifier != nil {
            // The verifier decides everything, host name included.
            configuration.certificateVerification = .noHostnameVerification
        }
        if let identity = tls.clientIdentity {
            configuration.certificateChain = try identity.certificateChainDER.enumerated().map { index, der in
                .certificate(
                    try load("client identity certificate #\(index + 1) is not a DER certificate") {
                        try NIOSSLCertificate(bytes: der, format: .der)
                    })
            }
            let key = try load("the client identity's private key is not a PKCS#8 or SEC1 DER key") {
                try NIOSSLPrivateKey(bytes: identity.privateKeyDER, format: .der)
            }
            configuration.privateKey = .privateKey(key)
        }
        return configuration
    }

    /// Runs `parse`, naming what failed to load when it throws.
    private static func load<T>(_ what: String, _ parse: () throws -> T) throws -> T {
        do {
            return try parse()
        } catch {
            throw TLSMaterialError(description: "\(what) (\(error))")
        }
    }

    /// Which piece of TLS material failed to load, and why.
    struct TLSMaterialError: Error, CustomStringConvertible {
        let description: String
    }

    /// Opens a ready-to-use connection for `key`; `progress`, when given, follows the steps.
    func makeConnection(
        id: ConnectionPoolStateMachine.ConnectionID,
        key: ConnectionKey,
        deadline: NIODeadline,
        loop: (any EventLoop)? = nil,
        progress: ConnectionSetupProgress? = nil
    ) async throws(EngineError) -> EstablishedConnection {
        var info = ConnectionInfo()
        let timerLoop = loop ?? group.any()
        let destination = try await self.destination(for: key, deadline: deadline, loop: timerLoop, info: &info)
        guard !destination.addresses.isEmpty else {
            throw .dnsFailure(host: destination.host, reason: "no IPv4 or IPv6 address")
        }
        info.addressOverride = destination.addressOverride
        guard NIODeadline.now() < deadline else { throw .timedOut(.connect) }
        info.connectStart = Date()
        progress?.advance(to: .connecting)
        return try await connect(
            id: id, key: key, destination: destination, info: info, deadline: deadline, loop: loop, progress: progress)
    }

    /// Connects to one of the destination's addresses: NIO's Happy Eyeballs connector
    /// staggers the attempts within the one deadline, and the first to connect wins.
    private func connect(
        id: ConnectionPoolStateMachine.ConnectionID,
        key: ConnectionKey,
        destination: Destination,
        info: ConnectionInfo,
        deadline: NIODeadline,
        loop: (any EventLoop)?,
        progress: ConnectionSetupProgress?
    ) async throws(EngineError) -> EstablishedConnection {
        if mayUseHTTP2(key) {
            return try await connectNegotiating(
                id: id, key: key, destination: destination, info: info, deadline: deadline, loop: loop, progress: progress)
        }
        let remaining = deadline - .now()
        let decompression = decompressionLimits
        let useTLS = key.scheme == .https
        let sslContext = self.sslContext
        let verifier = configuration.tls.verifier
        let host = key.host
        let setupErrorBox = SetupErrorBox()
        let proxy = key.proxy
        let socksTarget = try await socksTarget(for: key, deadline: deadline, loop: loop)
        let bracketedHost = host.contains(":") ? "[\(host)]" : host
        let tunnelsPlainHTTP = self.tunnelsPlainHTTP
        let absoluteFormProxy = proxy.flatMap { proxy in
            useTLS || tunnelsPlainHTTP || proxy.kind != .http ? nil : (origin: "http://\(bracketedHost):\(key.port)", authorization: proxy.authorization)
        }

        let attempts = ConnectAttemptLog()
        let bootstrap = makeBootstrap(destination: destination, connectTimeout: remaining, loop: loop)
            .channelInitializer(
                Self.pipelineInitializer(attempts: attempts) { channel, sync in
                    let handler = HTTP1ConnectionHandler(
                        host: host,
                        decompressionMaximumSize: decompression?.maximumSize,
                        setupErrorBox: setupErrorBox,
                        absoluteFormProxy: absoluteFormProxy
                    )
                    let loopHandler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                    try Self.addProxyAndTLSHandlers(
                        sync, channel: channel, key: key, socksTarget: socksTarget, tunnelsPlainHTTP: tunnelsPlainHTTP,
                        sslContext: sslContext, verifier: verifier,
                        setupErrorBox: setupErrorBox, progress: progress
                    ) { loopHandler.value.trustRejection = $0 }
                    try Self.addHTTP1Handlers(sync, handler: handler, decompressionRatio: decompression?.ratio)
                })

        let channel = try await Self.openChannel(bootstrap, destination: destination, key: key)

        let tlsStart = Date()
        let baseInfo = info
        // Wait for the TLS handshake (if any) within the connect deadline.
        let ready = Self.withSetupHandler(HTTP1ConnectionHandler.self, on: channel, setupErrorBox: setupErrorBox) { handler in
            let promise = Self.makeReadyPromise(of: Void.self, channel: channel, deadline: deadline, setupErrorBox: setupErrorBox)
            let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
            Self.whenProxyReady(channel).whenComplete { result in
                switch result {
                case .success: bound.value.waitUntilReady(tls: useTLS, promise: promise)
                case .failure(let error): promise.fail(error)
                }
            }
            return promise.futureResult.flatMapThrowing {
                try Self.checkNameAfterOverride(channel: channel, host: host, destination: destination, useTLS: useTLS, verifier: verifier, setupErrorBox: setupErrorBox)
                bound.value.info = Self.readyInfo(baseInfo, channel: channel, useTLS: useTLS, tlsStart: tlsStart, attempts: attempts)
                return bound
            }
        }
        let handler = try await Self.awaitReady(ready, channel: channel, setupErrorBox: setupErrorBox, host: key.host)
        return .http1(HTTP1Connection(id: id, key: key, channel: channel, handler: handler))
    }

    static func viaProxy(_ proxy: EngineProxy?, _ reason: String) -> String {
        guard let proxy else { return reason }
        return "\(reason) (the proxy \(proxy.host):\(proxy.port))"
    }

    static func describe(_ error: any Error) -> String {
        if let ioError = error as? IOError {
            return String(cString: strerror(ioError.errnoCode))
        }
        if let connectionErrors = error as? NIOConnectionError, let first = connectionErrors.connectionErrors.first {
            return describe(first.error)
        }
        return "\(error)"
    }

    static func describe(_ version: TLSVersion) -> String {
        switch version {
        case .tlsv1: return "TLSv1.0"
        case .tlsv11: return "TLSv1.1"
        case .tlsv12: return "TLSv1.2"
        case .tlsv13: return "TLSv1.3"
        }
    }
}
