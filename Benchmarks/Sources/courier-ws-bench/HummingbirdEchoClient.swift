import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Hummingbird's `WebSocketClient.connect(url:configuration:tlsConfiguration:eventLoopGroup:logger:handler:)`
/// (HummingbirdWSClient, from swift-websocket) on NIO's shared `MultiThreadedEventLoopGroup`:
/// the script runs inside its handler, writing with `outbound.write(.binary)` and reading
/// `inbound.messages(maxSize:)`; returning from the handler closes with 1000 and `connect` returns
/// once the server's close arrived. No extensions (permessage-deflate off); the frame limit
/// raised from 16 KiB to 1 MiB. Its TLS context is made per connection.
final class HummingbirdEchoClient: EchoClient {
    private let configuration: WebSocketClientConfiguration
    private let tlsConfiguration: TLSConfiguration?
    private let logger: Logger

    /// `trust`: the test CA, for the TLS cases.
    init(trust: ServerTrust?) {
        configuration = WebSocketClientConfiguration(maxFrameSize: EchoPayload.maximumMessageSize)
        tlsConfiguration = trust?.clientConfiguration()
        var logger = Logger(label: "courier-ws-bench.hummingbird")
        logger.logLevel = .error
        self.logger = logger
    }

    func run(_ url: URL, _ script: EchoScript) async throws {
        let close = try await WebSocketClient.connect(
            url: url.absoluteString,
            configuration: configuration,
            tlsConfiguration: tlsConfiguration,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger
        ) { inbound, outbound, _ in
            var messages = inbound.messages(maxSize: EchoPayload.maximumMessageSize).makeAsyncIterator()
            try await script.play { index in
                try await outbound.write(.binary(script.buffer(index)))
                guard case .binary(let echo)? = try await messages.next() else {
                    throw EchoError.unexpected("no binary echo for message #\(index)")
                }
                try script.check(echo, index)
            }
        }
        if let close, close.closeCode != .normalClosure {
            throw EchoError.badClose("code \(close.closeCode)")
        }
    }

    func shutdown() async {}
}
