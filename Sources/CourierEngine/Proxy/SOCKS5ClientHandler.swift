import NIOCore

/// Runs the SOCKS5 handshake (RFC 1928; username/password, RFC 1929) before anything else on
/// the channel: greeting, optional authentication, `CONNECT` to the origin.
///
/// It sits next to the socket, holds back the channel-active event and every outbound write
/// (a TLS handshake, a request) until the proxy answers success, then lets them through and
/// leaves the pipeline. Any other answer records
/// ``EngineError/proxyFailed(proxy:target:refusal:)`` and closes the channel.
///
/// (NIOSOCKS's `SOCKSClientHandler` offers only "no authentication" and passes the
/// channel-active event on before the proxy is connected, so Courier speaks the small client
/// side itself.)
final class SOCKS5ClientHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Where the proxy is asked to connect: a host name (socks5h) or an address (socks5).
    enum Target: Sendable, Equatable {
        case name(String)
        case address([UInt8])
    }

    private enum State {
        case greeting, authenticating, connecting, established, failed
    }

    private let proxy: EngineProxy
    private let target: Target
    private let targetPort: Int
    private let targetDescription: String
    private let setupErrorBox: SetupErrorBox
    private var state = State.greeting
    private var received: ByteBuffer?
    private var pendingWrites: [(NIOAny, EventLoopPromise<Void>?)] = []
    private var establishedPromises: [EventLoopPromise<Void>] = []

    init(proxy: EngineProxy, target: Target, targetHost: String, targetPort: Int, setupErrorBox: SetupErrorBox) {
        self.proxy = proxy
        self.target = target
        self.targetPort = targetPort
        self.targetDescription = (targetHost.contains(":") ? "[\(targetHost)]" : targetHost) + ":\(targetPort)"
        self.setupErrorBox = setupErrorBox
    }

    /// Succeeds once the proxy has connected to the origin; fails if it doesn't.
    func whenEstablished(_ promise: EventLoopPromise<Void>) {
        switch state {
        case .established: promise.succeed(())
        case .failed: promise.fail(setupErrorBox.value ?? EngineError.connectionLost("the SOCKS handshake failed"))
        default: establishedPromises.append(promise)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        // Method 0 (none), and 2 (username/password) when credentials are set.
        let methods: [UInt8] = proxy.username == nil ? [0x00] : [0x00, 0x02]
        send(context, [0x05, UInt8(methods.count)] + methods)
        // channelActive goes on once the proxy has connected.
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state != .established else {
            context.fireChannelRead(data)
            return
        }
        guard state != .failed else { return }
        var chunk = unwrapInboundIn(data)
        if received == nil { received = chunk } else { received?.writeBuffer(&chunk) }
        while state != .established, state != .failed, var buffer = received, buffer.readableBytes > 0 {
            let before = buffer.readableBytes
            step(context, &buffer)
            received = buffer
            if buffer.readableBytes == before { break }  // needs more bytes
        }
        if state == .established { finishEstablishing(context) }
    }

    /// Consumes one answer from `buffer` when it is complete.
    private func step(_ context: ChannelHandlerContext, _ buffer: inout ByteBuffer) {
        switch state {
        case .greeting:
            guard let answer = buffer.getBytes(at: buffer.readerIndex, length: min(2, buffer.readableBytes)) else { return }
            if answer[0] != 0x05 {
                let first = buffer.getBytes(at: buffer.readerIndex, length: min(8, buffer.readableBytes)) ?? answer
                return fail(context, .notASOCKS5Server(firstBytes: first))
            }
            guard answer.count == 2 else { return }
            buffer.moveReaderIndex(forwardBy: 2)
            switch answer[1] {
            case 0x00:
                sendConnect(context)
            case 0x02 where proxy.username != nil:
                let user = Array((proxy.username ?? "").utf8)
                let password = Array((proxy.password ?? "").utf8)
                guard (1...255).contains(user.count), password.count <= 255 else {
                    return fail(context, .malformedAnswer("the user name and password must each be 1 to 255 bytes for SOCKS5"))
                }
                state = .authenticating
                send(context, [0x01, UInt8(user.count)] + user + [UInt8(password.count)] + password)
            case 0xFF:
                fail(context, .noAcceptableAuthenticationMethod)
            default:
                fail(context, .malformedAnswer("it chose authentication method \(answer[1]), which was not offered"))
            }
        case .authenticating:
            guard let answer = buffer.readBytes(length: 2) else { return }
            guard answer[0] == 0x01 else {
                return fail(context, .malformedAnswer("authentication answer version \(answer[0]) (expected 1)"))
            }
            guard answer[1] == 0x00 else { return fail(context, .authenticationRefused(status: answer[1])) }
            sendConnect(context)
        case .connecting:
            guard let head = buffer.getBytes(at: buffer.readerIndex, length: min(5, buffer.readableBytes)), head.count == 5
            else { return }
            guard head[0] == 0x05 else { return fail(context, .malformedAnswer("reply version \(head[0]) (expected 5)")) }
            guard head[1] == 0x00 else { return fail(context, ProxyRefusal(socksReply: head[1])) }
            let addressLength: Int
            switch head[3] {
            case 0x01: addressLength = 4
            case 0x04: addressLength = 16
            case 0x03: addressLength = 1 + Int(head[4])
            default: return fail(context, .malformedAnswer("reply address type \(head[3])"))
            }
            let total = 4 + addressLength + 2
            guard buffer.readableBytes >= total else { return }
            buffer.moveReaderIndex(forwardBy: total)
            state = .established
        case .established, .failed:
            return
        }
    }

    private func sendConnect(_ context: ChannelHandlerContext) {
        state = .connecting
        var request: [UInt8] = [0x05, 0x01, 0x00]
        switch target {
        case .name(let name):
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                return fail(context, .malformedAnswer("the host name \(name) is longer than SOCKS5 allows (255 bytes)"))
            }
            request += [0x03, UInt8(bytes.count)] + bytes
        case .address(let bytes):
            request += [bytes.count == 4 ? 0x01 : 0x04] + bytes
        }
        request += [UInt8(truncatingIfNeeded: targetPort >> 8), UInt8(truncatingIfNeeded: targetPort)]
        send(context, request)
    }

    private func finishEstablishing(_ context: ChannelHandlerContext) {
        let rest = received
        received = nil
        context.fireChannelActive()
        for (data, promise) in pendingWrites { context.write(data, promise: promise) }
        pendingWrites = []
        context.flush()
        if let rest, rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        let promises = establishedPromises
        establishedPromises = []
        for promise in promises { promise.succeed(()) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func send(_ context: ChannelHandlerContext, _ bytes: [UInt8]) {
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if state == .established {
            context.write(data, promise: promise)
        } else {
            pendingWrites.append((data, promise))
        }
    }

    func flush(context: ChannelHandlerContext) {
        if state == .established { context.flush() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if state != .established {
            if state != .failed {
                state = .failed
                record(.closedDuringHandshake)
            }
            failPending()
        }
        context.fireChannelInactive()
    }

    private func record(_ refusal: ProxyRefusal) {
        if setupErrorBox.value == nil {
            setupErrorBox.set(.proxyFailed(proxy: proxy.authority, target: targetDescription, refusal: refusal))
        }
    }

    private func fail(_ context: ChannelHandlerContext, _ refusal: ProxyRefusal) {
        state = .failed
        record(refusal)
        failPending()
        context.close(promise: nil)
    }

    private func failPending() {
        let writes = pendingWrites
        pendingWrites = []
        for (_, promise) in writes { promise?.fail(ChannelError.ioOnClosedChannel) }
        let promises = establishedPromises
        establishedPromises = []
        let error = setupErrorBox.value ?? EngineError.connectionLost("the SOCKS handshake failed")
        for promise in promises { promise.fail(error) }
    }
}
