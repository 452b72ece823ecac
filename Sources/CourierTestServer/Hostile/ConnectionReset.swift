import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Ends a connection with a reset instead of an orderly close, as the fault endpoints and the
/// hostile server's scripts need.
enum ConnectionReset {
    /// Closes with `SO_LINGER {1, 0}` so that the peer sees RST instead of FIN.
    static func reset(_ context: ChannelHandlerContext) {
        guard let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}
