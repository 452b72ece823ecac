import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A SOCKS5 proxy on loopback (RFC 1928, `CONNECT` only), for testing clients' SOCKS support.
/// Without credentials it accepts "no authentication"; with them it demands username/password
/// (RFC 1929) and refuses a wrong pair, or a sub-negotiation version other than 1, with
/// status 1. It records the target of every `CONNECT` exactly as the client sent it (a host
/// name for remote DNS, an address for local DNS), then relays bytes both ways untouched. `forcedReply` makes it answer every
/// `CONNECT` with that reply code instead (4 host unreachable, 7 command not supported, …).
/// `answersInPieces` sends every handshake answer one byte per write and names the bound
/// address by a host name (address type 3), to test a client's parsing.
public final class TestSOCKSProxyServer: Sendable {
    /// One `CONNECT` the proxy was asked for.
    public struct Request: Sendable, Equatable {
        /// How the client named the target.
        public enum AddressType: Sendable, Equatable {
            /// A host name (address type 3): the client wants the proxy to resolve it.
            case domainName
            /// An IPv4 address (type 1).
            case ipv4
            /// An IPv6 address (type 4).
            case ipv6
        }

        /// The target host: the name as sent, or the address in text form.
        public let host: String
        /// The target port.
        public let port: Int
        /// Whether the client sent a name or an address.
        public let addressType: AddressType
        /// The user name the client authenticated with, if any.
        public let username: String?

        /// A request record (tests compare against one).
        public init(host: String, port: Int, addressType: AddressType, username: String?) {
            self.host = host
            self.port = port
            self.addressType = addressType
            self.username = username
        }
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let listener: LoopbackListener
    private let log = Mutex<[Request]>([])
    private let greetings = Mutex<Int>(0)

    /// Every `CONNECT` it was asked for, in order.
    public var requests: [Request] { log.withLock { $0 } }
    /// How many clients sent a SOCKS5 greeting.
    public var greetingsReceived: Int { greetings.withLock { $0 } }

    private init(listener: LoopbackListener) {
        self.port = listener.port
        self.listener = listener
    }

    /// Starts a proxy on an ephemeral loopback port. With `credentials`, clients must
    /// authenticate with that user name and password; with `forcedReply`, every `CONNECT` gets
    /// that (failure) reply code; with `answersInPieces`, answers arrive a byte at a time.
    public static func start(
        credentials: (username: String, password: String)? = nil, forcedReply: UInt8? = nil, answersInPieces: Bool = false
    ) async throws -> TestSOCKSProxyServer {
        let box = SOCKSServerBox()
        let user = credentials?.username
        let password = credentials?.password
        let listener = try await LoopbackListener.start {
            SOCKSServerHandler(
                credentials: user.map { ($0, password ?? "") },
                forcedReply: forcedReply,
                answersInPieces: answersInPieces,
                greeted: { box.server.withLock { $0 }?.greetings.withLock { $0 += 1 } },
                record: { request in box.server.withLock { $0 }?.log.withLock { $0.append(request) } }
            )
        }
        let server = TestSOCKSProxyServer(listener: listener)
        box.server.withLock { $0 = server }
        return server
    }

    /// Starts a proxy, runs `body` with it, and shuts the proxy down whether `body` returns or
    /// throws.
    public static func withRunning<T>(
        credentials: (username: String, password: String)? = nil, forcedReply: UInt8? = nil, answersInPieces: Bool = false,
        _ body: (TestSOCKSProxyServer) async throws -> T
    ) async throws -> T {
        try await withScoped(
            try await start(credentials: credentials, forcedReply: forcedReply, answersInPieces: answersInPieces),
            shutdown: { try await $0.shutdown() }, body)
    }

    /// Stops listening and closes every connection.
    public func shutdown() async throws {
        try await listener.shutdown()
    }
}

/// Lets connection handlers reach the server object made after the bootstrap.
private final class SOCKSServerBox: Sendable {
    let server = Mutex<TestSOCKSProxyServer?>(nil)
}

/// One client connection: greeting, authentication, `CONNECT`, then relaying.
private final class SOCKSServerHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: used only on its channel's event loop.
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State { case greeting, authenticating, request, connecting, relaying }

    private let credentials: (String, String)?
    private let forcedReply: UInt8?
    private let answersInPieces: Bool
    private let greeted: @Sendable () -> Void
    private let record: @Sendable (TestSOCKSProxyServer.Request) -> Void
    private var state = State.greeting
    private var buffered: ByteBuffer?
    private var peer: (any Channel)?
    private var username: String?

    init(
        credentials: (String, String)?, forcedReply: UInt8?, answersInPieces: Bool, greeted: @escaping @Sendable () -> Void,
        record: @escaping @Sendable (TestSOCKSProxyServer.Request) -> Void
    ) {
        self.credentials = credentials
        self.forcedReply = forcedReply
        self.answersInPieces = answersInPieces
        self.greeted = greeted
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if let peer {
            peer.writeAndFlush(bytes, promise: nil)
            return
        }
        if buffered == nil { buffered = bytes } else { buffered?.writeBuffer(&bytes) }
        while var buffer = buffered, buffer.readableBytes > 0, state != .connecting, state != .relaying {
            let before = buffer.readableBytes
            step(context, &buffer)
            buffered = buffer
            if buffer.readableBytes == before { break }
        }
    }

    private func step(_ context: ChannelHandlerContext, _ buffer: inout ByteBuffer) {
        let view = Array(buffer.readableBytesView)
        switch state {
        case .greeting:
            guard view.count >= 2 else { return }
            guard view[0] == 5 else { return close(context) }
            let count = Int(view[1])
            guard view.count >= 2 + count else { return }
            buffer.moveReaderIndex(forwardBy: 2 + count)
            greeted()
            let methods = view[2..<(2 + count)]
            if credentials != nil {
                guard methods.contains(2) else { return reply(context, [5, 0xFF], thenClose: true) }
                state = .authenticating
                reply(context, [5, 2])
            } else {
                guard methods.contains(0) else { return reply(context, [5, 0xFF], thenClose: true) }
                state = .request
                reply(context, [5, 0])
            }
        case .authenticating:
            guard view.count >= 2 else { return }
            let userLength = Int(view[1])
            guard view.count >= 3 + userLength else { return }
            let passwordLength = Int(view[2 + userLength])
            guard view.count >= 3 + userLength + passwordLength else { return }
            buffer.moveReaderIndex(forwardBy: 3 + userLength + passwordLength)
            let user = String(decoding: view[2..<(2 + userLength)], as: UTF8.self)
            let password = String(decoding: view[(3 + userLength)..<(3 + userLength + passwordLength)], as: UTF8.self)
            guard view[0] == 1, let credentials, user == credentials.0, password == credentials.1 else {
                return reply(context, [1, 1], thenClose: true)
            }
            username = user
            state = .request
            reply(context, [1, 0])
        case .request:
            guard view.count >= 5 else { return }
            guard view[0] == 5 else { return close(context) }
            let host: String
            let type: TestSOCKSProxyServer.Request.AddressType
            let addressEnd: Int
            switch view[3] {
            case 1:
                addressEnd = 4 + 4
                guard view.count >= addressEnd + 2 else { return }
                host = view[4..<8].map(String.init).joined(separator: ".")
                type = .ipv4
            case 4:
                addressEnd = 4 + 16
                guard view.count >= addressEnd + 2 else { return }
                let address = Array(view[4..<20])
                host = (try? SocketAddress(packedIPAddress: ByteBuffer(bytes: address), port: 0).ipAddress ?? "") ?? ""
                type = .ipv6
            case 3:
                addressEnd = 5 + Int(view[4])
                guard view.count >= addressEnd + 2 else { return }
                host = String(decoding: view[5..<addressEnd], as: UTF8.self)
                type = .domainName
            default:
                return reply(context, [5, 8, 0, 1, 0, 0, 0, 0, 0, 0], thenClose: true)
            }
            let port = Int(view[addressEnd]) << 8 | Int(view[addressEnd + 1])
            buffer.moveReaderIndex(forwardBy: addressEnd + 2)
            record(.init(host: host, port: port, addressType: type, username: username))
            if let forcedReply { return reply(context, [5, forcedReply, 0, 1, 0, 0, 0, 0, 0, 0], thenClose: true) }
            guard view[1] == 1 else { return reply(context, [5, 7, 0, 1, 0, 0, 0, 0, 0, 0], thenClose: true) }
            connect(context, host: host, port: port)
        case .connecting, .relaying:
            return
        }
    }

    private func connect(_ context: ChannelHandlerContext, host: String, port: Int) {
        state = .connecting
        let client = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let inbound = context.channel
        RelayHandler.connect(to: host, port: port, relayingTo: inbound, on: context.eventLoop)
            .whenComplete { result in
                let (handler, context) = client.value
                switch result {
                case .failure:
                    handler.reply(context, [5, 4, 0, 1, 0, 0, 0, 0, 0, 0], thenClose: true)
                case .success(let outbound):
                    // The client left while we connected: nothing will close the upstream end.
                    guard inbound.isActive else { return outbound.close(promise: nil) }
                    handler.peer = outbound
                    handler.state = .relaying
                    let bound: [UInt8] =
                        handler.answersInPieces ? [3, 9] + Array("localhost".utf8) + [0, 0] : [1, 127, 0, 0, 1, 0, 0]
                    handler.reply(context, [5, 0, 0] + bound)
                    if let rest = handler.buffered, rest.readableBytes > 0 { outbound.writeAndFlush(rest, promise: nil) }
                    handler.buffered = nil
                }
            }
    }

    private func reply(_ context: ChannelHandlerContext, _ bytes: [UInt8], thenClose: Bool = false) {
        let channel = context.channel
        let pieces = answersInPieces ? bytes.map { [$0] } : [bytes]
        for piece in pieces.dropLast() {
            context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(bytes: piece)), promise: nil)
        }
        let buffer = channel.allocator.buffer(bytes: pieces.last ?? [])
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in
            if thenClose { channel.close(promise: nil) }
        }
        if thenClose { state = .connecting }
    }

    private func close(_ context: ChannelHandlerContext) {
        state = .connecting
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        peer?.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
