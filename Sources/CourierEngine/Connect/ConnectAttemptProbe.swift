import Foundation
import NIOCore
import Synchronization

/// The TCP connect attempts of one connection's setup, as ``ConnectAttemptProbe``s note them:
/// NIO's Happy Eyeballs connector may try several addresses (IPv6 and IPv4, staggered) and
/// keeps the first that connects. Read when the connection is ready, into its metrics.
final class ConnectAttemptLog: Sendable {
    private let attempts = Mutex<[EngineMetrics.ConnectAttempt]>([])

    /// The attempts that ended so far, in the order they started.
    var ended: [EngineMetrics.ConnectAttempt] {
        attempts.withLock { $0 }.sorted { $0.start < $1.start }
    }

    func record(_ attempt: EngineMetrics.ConnectAttempt) {
        attempts.withLock { $0.append(attempt) }
    }
}

/// The first handler of every channel a connection's setup opens: notes the address each
/// channel connects to, when, and how it ended, in a ``ConnectAttemptLog``. Passes everything on
/// unchanged.
final class ConnectAttemptProbe: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny

    private let log: ConnectAttemptLog

    init(log: ConnectAttemptLog) {
        self.log = log
    }

    func connect(context: ChannelHandlerContext, to address: SocketAddress, promise: EventLoopPromise<Void>?) {
        let start = Date()
        let log = self.log
        let outcome = promise ?? context.eventLoop.makePromise()
        outcome.futureResult.whenComplete { result in
            var error: String?
            if case .failure(let failure) = result { error = ConnectionFactory.describe(failure) }
            log.record(
                EngineMetrics.ConnectAttempt(
                    address: address.ipAddress ?? address.pathname ?? "\(address)", port: address.port, start: start,
                    end: Date(), error: error))
        }
        context.connect(to: address, promise: outcome)
    }
}
