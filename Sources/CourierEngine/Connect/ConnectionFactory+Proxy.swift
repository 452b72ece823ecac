import NIOCore

extension ConnectionFactory {
    /// Where a SOCKS5 proxy is asked to connect for `key`: nil without a SOCKS proxy; the
    /// host name for `socks5h`; for `socks5`, the first address the name resolves to here.
    /// - Parameters: deadline, loop: the connect deadline (a local lookup counts against it) and
    ///   where its timer runs.
    func socksTarget(
        for key: ConnectionKey, deadline: NIODeadline, loop: (any EventLoop)?
    ) async throws(EngineError) -> SOCKS5ClientHandler.Target? {
        guard let proxy = key.proxy, proxy.kind != .http else { return nil }
        if let literal = IPAddressBytes(key.host) { return .address(literal.bytes) }
        if proxy.kind == .socks5h { return .name(key.host) }
        // Resolved here as a direct connection's name would be (resolve entries, the resolver);
        // not timed: the connection's lookup was the proxy's.
        var untimed = ConnectionInfo()
        let addresses = try await lookUp(host: key.host, port: key.port, deadline: deadline, loop: loop ?? group.any(), info: &untimed)
            .addresses
        guard let address = addresses.first?.ipAddress, let bytes = IPAddressBytes(address) else {
            throw .dnsFailure(host: key.host, reason: "no IPv4 or IPv6 address (resolved locally for the socks5 proxy)")
        }
        return .address(bytes.bytes)
    }

    /// Puts the proxy's handshake first in the pipeline: a `CONNECT` tunnel through an HTTP
    /// proxy for https, the SOCKS5 handshake for a SOCKS proxy; nothing otherwise.
    static func addProxyHandshake(
        _ sync: ChannelPipeline.SynchronousOperations,
        proxy: EngineProxy?,
        socksTarget: SOCKS5ClientHandler.Target?,
        useTLS: Bool,
        host: String,
        port: Int,
        setupErrorBox: SetupErrorBox
    ) throws {
        guard let proxy else { return }
        if let socksTarget {
            try sync.addHandler(
                SOCKS5ClientHandler(
                    proxy: proxy, target: socksTarget, targetHost: host, targetPort: port, setupErrorBox: setupErrorBox))
        } else if useTLS {
            try sync.addHandler(
                ProxyTunnelHandler(
                    targetHost: host, targetPort: port, authorization: proxy.authorization, setupErrorBox: setupErrorBox))
        }
    }

    /// Succeeds when the channel's SOCKS5 handshake (if any) is done. On the event loop.
    static func whenProxyReady(_ channel: any Channel) -> EventLoopFuture<Void> {
        guard let socks = try? channel.pipeline.syncOperations.handler(type: SOCKS5ClientHandler.self) else {
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        let promise = channel.eventLoop.makePromise(of: Void.self)
        socks.whenEstablished(promise)
        return promise.futureResult
    }
}
