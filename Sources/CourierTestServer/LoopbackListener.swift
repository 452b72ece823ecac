import NIOCore
import NIOPosix

/// A listening socket on an ephemeral 127.0.0.1 port with its own one-thread event loop
/// group: what the test proxies (`TestProxyServer`, `TestSOCKSProxyServer`) accept clients on.
struct LoopbackListener: Sendable {
    /// The port it listens on (127.0.0.1).
    let port: Int
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup

    /// Binds an ephemeral loopback port; every accepted connection gets the handler
    /// `makeHandler` returns (called on that connection's event loop).
    static func start(
        handler makeHandler: @escaping @Sendable () -> any ChannelHandler
    ) async throws -> LoopbackListener {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(makeHandler())
                }
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            try? await group.shutdownGracefully()
            throw ChannelError.unknownLocalAddress
        }
        return LoopbackListener(port: port, channel: channel, group: group)
    }

    /// Stops listening and closes every connection.
    func shutdown() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }
}
