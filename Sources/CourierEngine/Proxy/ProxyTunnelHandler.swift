import NIOCore

/// Opens a `CONNECT` tunnel through a forward proxy before anything else on the channel runs.
///
/// It sits next to the socket. On connect it sends `CONNECT host:port` and holds back the
/// channel-active event and every outbound write (the TLS handshake) until the proxy answers
/// 2xx; then it lets them through and leaves the pipeline. Any other answer fails the
/// connection with ``EngineError/cannotConnect(host:port:reason:)`` naming the proxy's status.
final class ProxyTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private static let maximumResponseHead = 16 * 1024

    private let targetHost: String
    private let targetPort: Int
    private let authorization: String?
    private let setupErrorBox: SetupErrorBox
    private var response: ByteBuffer?
    private var pendingWrites: [(NIOAny, EventLoopPromise<Void>?)] = []
    private var established = false

    init(targetHost: String, targetPort: Int, authorization: String?, setupErrorBox: SetupErrorBox) {
        self.targetHost = targetHost
        self.targetPort = targetPort
        self.authorization = authorization
        self.setupErrorBox = setupErrorBox
    }

    func channelActive(context: ChannelHandlerContext) {
        // IPv6 literals keep their brackets in the authority.
        let host = targetHost.contains(":") ? "[\(targetHost)]" : targetHost
        var request = "CONNECT \(host):\(targetPort) HTTP/1.1\r\nHost: \(host):\(targetPort)\r\n"
        if let authorization { request += "Proxy-Authorization: \(authorization)\r\n" }
        request += "\r\n"
        var buffer = context.channel.allocator.buffer(capacity: request.utf8.count)
        buffer.writeString(request)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        // channelActive goes on once the tunnel is up.
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !established else {
            context.fireChannelRead(data)
            return
        }
        var chunk = unwrapInboundIn(data)
        if response == nil { response = chunk } else { response?.writeBuffer(&chunk) }
        guard let received = response else { return }
        guard let end = received.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if received.readableBytes > Self.maximumResponseHead {
                fail(context, "the proxy's answer to CONNECT has no end of headers within 16 KiB")
            }
            return
        }
        let statusLine = Self.printable(
            String(decoding: received.readableBytesView[received.readerIndex..<end.lowerBound], as: UTF8.self)
                .split(separator: "\r\n", maxSplits: 1).first ?? "")
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            fail(context, "the proxy answered CONNECT with \"\(statusLine)\"")
            return
        }
        guard (200..<300).contains(status) else {
            let hint = status == 407 ? " (proxy authentication required: set the proxy's user name and password)" : ""
            fail(context, "the proxy refused the tunnel to \(targetHost):\(targetPort): \(statusLine)\(hint)")
            return
        }
        established = true
        var rest = received
        rest.moveReaderIndex(to: end.upperBound)
        response = nil
        context.fireChannelActive()
        for (data, promise) in pendingWrites { context.write(data, promise: promise) }
        pendingWrites = []
        context.flush()
        if rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// The proxy's status line for an error message (logs, a terminal): control characters
    /// (terminal escapes) as `?`, cut to 200 characters.
    static func printable(_ line: Substring) -> String {
        let cleaned = String(line.prefix(200).map { $0.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "?" : $0 })
        return line.count > 200 ? cleaned + "…" : cleaned
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if established {
            context.write(data, promise: promise)
        } else {
            pendingWrites.append((data, promise))
        }
    }

    func flush(context: ChannelHandlerContext) {
        if established { context.flush() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !established {
            if setupErrorBox.value == nil {
                setupErrorBox.set(.cannotConnect(host: targetHost, port: targetPort, reason: "the proxy closed the connection before the tunnel was up"))
            }
            failPendingWrites()
        }
        context.fireChannelInactive()
    }

    private func fail(_ context: ChannelHandlerContext, _ reason: String) {
        setupErrorBox.set(.cannotConnect(host: targetHost, port: targetPort, reason: reason))
        failPendingWrites()
        context.close(promise: nil)
    }

    private func failPendingWrites() {
        let writes = pendingWrites
        pendingWrites = []
        for (_, promise) in writes { promise?.fail(ChannelError.ioOnClosedChannel) }
    }
}
