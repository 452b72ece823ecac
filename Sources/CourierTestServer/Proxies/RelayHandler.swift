import NIOCore
import NIOPosix

/// Copies what one channel reads to another, and closes the other when it closes: the
/// upstream half of a test proxy's tunnel (the client's handler writes the other way).
final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let target: any Channel

    init(to target: any Channel) { self.target = target }

    /// Connects to `host:port` on `eventLoop`, relaying what arrives there to `inbound`.
    /// `localhost` is 127.0.0.1 (the test servers listen there, not on ::1).
    static func connect(
        to host: String, port: Int, relayingTo inbound: any Channel, on eventLoop: any EventLoop
    ) -> EventLoopFuture<any Channel> {
        ClientBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RelayHandler(to: inbound))
                }
            }
            .connect(host: host == "localhost" ? "127.0.0.1" : host, port: port)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        target.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        target.close(promise: nil)
        context.fireChannelInactive()
    }
}
