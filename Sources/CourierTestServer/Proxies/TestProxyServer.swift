import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A forward HTTP proxy on loopback, for testing clients' proxy support: `CONNECT host:port`
/// opens a tunnel (then bytes flow both ways untouched), and a request in absolute form
/// (`GET http://host:port/path`) is relayed on a connection to that host. Optionally demands
/// `Proxy-Authorization` (answering 407 with `Proxy-Authenticate: Basic` otherwise). It
/// records the request lines it saw.
public final class TestProxyServer: Sendable {
    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let listener: LoopbackListener
    private let log = Mutex<[String]>([])

    /// The first line of every request it received (`CONNECT localhost:443 HTTP/1.1`,
    /// `GET http://127.0.0.1:8080/get HTTP/1.1`), in order.
    public var requestLines: [String] { log.withLock { $0 } }

    private init(listener: LoopbackListener) {
        self.port = listener.port
        self.listener = listener
    }

    /// Starts a proxy on an ephemeral loopback port. With `requiredAuthorization` (the whole
    /// header value, e.g. `Basic dXNlcjpwYXNz`), requests without it get 407.
    public static func start(requiredAuthorization: String? = nil) async throws -> TestProxyServer {
        let box = ServerBox()
        let listener = try await LoopbackListener.start {
            ProxyRequestHandler(
                requiredAuthorization: requiredAuthorization,
                record: { line in box.server.withLock { $0 }?.log.withLock { $0.append(line) } }
            )
        }
        let server = TestProxyServer(listener: listener)
        box.server.withLock { $0 = server }
        return server
    }

    /// Starts a proxy, runs `body` with it, and shuts the proxy down whether `body` returns or
    /// throws.
    public static func withRunning<T>(
        requiredAuthorization: String? = nil, _ body: (TestProxyServer) async throws -> T
    ) async throws -> T {
        try await withScoped(try await start(requiredAuthorization: requiredAuthorization), shutdown: { try await $0.shutdown() }, body)
    }

    /// Stops listening and closes every connection.
    public func shutdown() async throws {
        try await listener.shutdown()
    }
}

/// Lets connection handlers reach the server object made after the bootstrap.
private final class ServerBox: Sendable {
    let server = Mutex<TestProxyServer?>(nil)
}

/// One client connection of the proxy: reads the request head, then tunnels or relays.
private final class ProxyRequestHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: used only on its channel's event loop.
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let requiredAuthorization: String?
    private let record: @Sendable (String) -> Void
    private var buffered: ByteBuffer?
    private var peer: (any Channel)?
    private var connecting = false

    init(requiredAuthorization: String?, record: @escaping @Sendable (String) -> Void) {
        self.requiredAuthorization = requiredAuthorization
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        if let peer {
            peer.writeAndFlush(bytes, promise: nil)
            return
        }
        if buffered == nil { buffered = bytes } else { var chunk = bytes; buffered?.writeBuffer(&chunk) }
        // While connecting upstream, what arrives waits in `buffered` and goes out once connected.
        guard !connecting else { return }
        guard let head = buffered, let end = head.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if (buffered?.readableBytes ?? 0) > 64 * 1024 { context.close(promise: nil) }
            return
        }
        let headText = String(decoding: head.readableBytesView[head.readerIndex..<end.upperBound], as: UTF8.self)
        let lines = headText.split(separator: "\r\n").map(String.init)
        guard let requestLine = lines.first else { return context.close(promise: nil) }
        record(requestLine)
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3 else { return respond(context, "400 Bad Request") }
        let authorization = lines.dropFirst().first { $0.lowercased().hasPrefix("proxy-authorization:") }
            .map { String($0.dropFirst("proxy-authorization:".count)).trimmingCharacters(in: .whitespaces) }
        if let requiredAuthorization, authorization != requiredAuthorization {
            return respond(context, "407 Proxy Authentication Required", extra: "Proxy-Authenticate: Basic realm=\"proxy\"\r\n")
        }
        let isConnect = parts[0] == "CONNECT"
        let authority: Substring
        if isConnect {
            authority = parts[1]
        } else if parts[1].hasPrefix("http://") {
            let afterScheme = parts[1].dropFirst(7)
            authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
        } else {
            return respond(context, "400 Bad Request")
        }
        // The port: 1 to 5 digits and at most 65535 (`Int` alone takes `+80`, `-1`, `70000`).
        guard let colon = authority.lastIndex(of: ":"), case let digits = authority[authority.index(after: colon)...],
            (1...5).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = Int(digits), port <= 65_535
        else {
            return respond(context, "400 Bad Request")
        }
        let host = String(authority[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        connecting = true
        let client = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let inbound = context.channel
        RelayHandler.connect(to: host, port: port, relayingTo: inbound, on: context.eventLoop).whenComplete { result in
            let (handler, context) = client.value
            switch result {
            case .failure:
                handler.respond(context, "502 Bad Gateway")
            case .success(let outbound):
                // The client left while we connected: nothing will close the upstream end.
                guard inbound.isActive else { return outbound.close(promise: nil) }
                handler.peer = outbound
                // Everything read so far, including what arrived while connecting.
                var rest = handler.buffered ?? head
                handler.buffered = nil
                if isConnect {
                    var reply = context.channel.allocator.buffer(capacity: 64)
                    reply.writeString("HTTP/1.1 200 Connection Established\r\n\r\n")
                    context.writeAndFlush(handler.wrapOutboundOut(reply), promise: nil)
                    rest.moveReaderIndex(to: end.upperBound)
                }
                if rest.readableBytes > 0 { outbound.writeAndFlush(rest, promise: nil) }
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        peer?.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func respond(_ context: ChannelHandlerContext, _ status: String, extra: String = "") {
        var reply = context.channel.allocator.buffer(capacity: 128)
        reply.writeString("HTTP/1.1 \(status)\r\n\(extra)Content-Length: 0\r\nConnection: close\r\n\r\n")
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(reply)).whenComplete { _ in channel.close(promise: nil) }
    }
}
