import NIOCore
import NIOWebSocket

/// The I/O around ``WebSocketStateMachine`` on an upgraded connection: turns the server's
/// frames into messages for the ``WebSocketInbox``, answers pings, sends Courier's messages,
/// pings and close frames (masked, RFC 6455 §5.3), runs the ping, pong and close clocks, and
/// ends the inbox when the connection ends.
///
/// Lives on its channel's event loop; ``WebSocketConnection`` reaches it through `execute`.
final class WebSocketChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var machine: WebSocketStateMachine
    private let codec: PerMessageDeflateCodec?
    private let inbox: WebSocketInbox
    private let options: WebSocketOptions
    private var context: ChannelHandlerContext?

    private var readingPaused = false
    private var readPending = false
    /// Pings awaiting their pong, by the counter their payload carries.
    private var pings: [UInt64: (sent: NIODeadline, promise: EventLoopPromise<Duration>?, timeout: Scheduled<Void>)] = [:]
    private var nextPing: UInt64 = 0
    private var pingTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?
    /// What the socket ends with when the connection goes (set as soon as it is known).
    private var ending: WebSocketInbox.Ending?
    private var closePromises: [EventLoopPromise<Void>] = []
    private var isInactive = false

    init(options: WebSocketOptions, deflate: PerMessageDeflate?, inbox: WebSocketInbox) throws {
        self.options = options
        self.inbox = inbox
        self.codec = try deflate.map { try PerMessageDeflateCodec(parameters: $0) }
        self.machine = WebSocketStateMachine(maximumMessageSize: options.maximumMessageSize, compressionNegotiated: deflate != nil)
    }

    // MARK: - Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        schedulePing(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// The next automatic ping (``WebSocketOptions/pingInterval``), while the socket is open.
    private func schedulePing(context: ChannelHandlerContext) {
        guard let interval = options.pingInterval, !isInactive else { return }
        pingTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(interval)) { [self] in
            guard machine.state == .open, !isInactive else { return }
            ping(promise: nil)
            schedulePing(context: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch machine.receive(frame) {
        case .none:
            break
        case .message(let isText, let compressed, let payload):
            deliver(isText: isText, compressed: compressed, payload: payload, context: context)
        case .sendPong(let payload):
            write(.pong, payload, context: context, promise: nil)
        case .pongReceived(var payload):
            guard payload.readableBytes == 8, let counter = payload.readInteger(as: UInt64.self),
                let ping = pings.removeValue(forKey: counter)
            else { return }
            ping.timeout.cancel()
            let elapsed = NIODeadline.now() - ping.sent
            ping.promise?.succeed(.nanoseconds(elapsed.nanoseconds))
        case .echoClose(let code, let reason):
            let error: WebSocketError? = code.map { WebSocketCloseCode(rawValue: $0)?.isNormal == true ? nil : .closedByServer(code: $0, reason: reason) } ?? nil
            end(WebSocketInbox.Ending(code: code ?? WebSocketCloseCode.noStatusReceived.rawValue, reason: reason, error: error))
            var payload = context.channel.allocator.buffer(capacity: 2)
            if let code { payload.writeInteger(UInt16(code)) }
            write(.connectionClose, payload, context: context, promise: nil)
            // The server ends the TCP connection first (RFC 6455 §7.1.1); within the close wait.
            armCloseTimer(context: context)
        case .closeAcknowledged:
            context.close(promise: nil)
        case .fail(let code, let reason):
            failConnection(code: code, reason: reason, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case NIOWebSocketError.invalidFrameLength:
            failConnection(code: .messageTooBig, reason: "a frame is larger than \(options.maximumMessageSize) bytes", context: context)
        case NIOWebSocketError.fragmentedControlFrame:
            failConnection(code: .protocolError, reason: "the server fragmented a control frame", context: context)
        case NIOWebSocketError.multiByteControlFrameLength:
            failConnection(code: .protocolError, reason: "the server sent a control frame longer than 125 bytes", context: context)
        default:
            if ending == nil { ending = .init(code: 1006, reason: "", error: .connectionLost("\(error)")) }
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        isInactive = true
        machine.closed()
        pingTimer?.cancel()
        pingTimer = nil
        closeTimer?.cancel()
        closeTimer = nil
        let error = WebSocketError.connectionLost("the connection closed")
        for ping in pings.values {
            ping.timeout.cancel()
            ping.promise?.fail(ending?.error ?? error)
        }
        pings = [:]
        end(ending ?? .init(code: WebSocketCloseCode.abnormalClosure.rawValue, reason: "", error: error))
        let promises = closePromises
        closePromises = []
        promises.forEach { $0.succeed() }
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if readingPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    // MARK: - From the connection (on the event loop)

    /// Sends `message` (compressed when permessage-deflate is on and it helps).
    func send(_ message: WebSocketMessage, promise: EventLoopPromise<Void>) {
        guard let context, machine.state == .open, !isInactive else {
            let ending = self.ending ?? .init(code: 1006, reason: "", error: nil)
            promise.fail(WebSocketError.closed(code: ending.code, reason: ending.reason))
            return
        }
        let opcode: WebSocketOpcode
        var payload: ByteBuffer
        switch message {
        case .text(let text):
            opcode = .text
            payload = context.channel.allocator.buffer(string: text)
        case .binary(let bytes):
            opcode = .binary
            payload = bytes
        }
        var compressed = false
        if let codec, codec.compressesOutgoing {
            do {
                if let deflated = try codec.compress(payload, allocator: context.channel.allocator) {
                    payload = deflated
                    compressed = true
                }
            } catch {
                promise.fail(WebSocketError.closed(code: 1011, reason: "compression failed: \(error)"))
                return
            }
        }
        write(opcode, payload, rsv1: compressed, context: context, promise: promise)
    }

    /// Sends a ping; `promise` gets the round trip when its pong arrives. With no pong within
    /// the pong timeout the connection is dropped (1006).
    func ping(promise: EventLoopPromise<Duration>?) {
        guard let context, machine.state == .open, !isInactive else {
            let ending = self.ending ?? .init(code: 1006, reason: "", error: nil)
            promise?.fail(WebSocketError.closed(code: ending.code, reason: ending.reason))
            return
        }
        nextPing &+= 1
        let counter = nextPing
        var payload = context.channel.allocator.buffer(capacity: 8)
        payload.writeInteger(counter)
        let seconds = Double(options.pongTimeout.components.seconds) + Double(options.pongTimeout.components.attoseconds) / 1e18
        let timeout = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(options.pongTimeout)) { [self] in
            let error = WebSocketError.pongTimedOut(seconds: seconds)
            if ending == nil { ending = .init(code: 1006, reason: "", error: error) }
            machine.closed()
            context.close(promise: nil)
        }
        pings[counter] = (NIODeadline.now(), promise, timeout)
        write(.ping, payload, context: context, promise: nil)
    }

    /// Starts the close handshake with `code` and `reason`; `promise` succeeds once the
    /// connection is closed (the server's close came back, or the close wait ran out).
    func close(code: Int, reason: String, promise: EventLoopPromise<Void>) {
        guard let context, !isInactive else {
            promise.succeed()
            return
        }
        closePromises.append(promise)
        guard machine.closeSent() else { return }
        ending = .init(code: code, reason: reason, error: nil)
        write(.connectionClose, Self.closePayload(code: code, reason: reason, allocator: context.channel.allocator), context: context, promise: nil)
        armCloseTimer(context: context)
    }

    /// Reads the socket again (the inbox drained below its low-water mark).
    func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        if readPending, let context {
            readPending = false
            context.read()
        }
    }

    // MARK: - Helpers

    private func deliver(isText: Bool, compressed: Bool, payload: ByteBuffer, context: ChannelHandlerContext) {
        var inflated = payload
        if compressed, let codec {
            do {
                inflated = try codec.decompress(payload, limit: machine.maximumMessageSize, allocator: context.channel.allocator)
            } catch {
                let failure = machine.inflationFailed(tooBig: error == .tooBig)
                failConnection(code: failure.code, reason: failure.reason, context: context)
                return
            }
        }
        if !isText, !compressed, inflated.storageCapacity > inflated.readableBytes * 2 + 4096 {
            // A small window into a larger buffer (a read's, or the frame decoder's): a reader
            // keeping the message would keep all of that buffer, and the channel could not
            // reuse it for its next read. A copy of the payload is cheaper than either.
            var own = context.channel.allocator.buffer(capacity: inflated.readableBytes)
            own.writeImmutableBuffer(inflated)
            inflated = own
        }
        switch machine.messageInflated(isText: isText, payload: inflated) {
        case .success(let message):
            if inbox.deliver(message) { readingPaused = true }
        case .failure(let failure):
            failConnection(code: failure.code, reason: failure.reason, context: context)
        }
    }

    /// The server broke the protocol: a close frame with `code` and `reason`, then the
    /// connection is closed (RFC 6455 §7.1.7); the reader gets the violation.
    private func failConnection(code: WebSocketCloseCode, reason: String, context: ChannelHandlerContext) {
        machine.closed()
        guard ending == nil || ending?.error == nil else { return }
        let error = WebSocketError.protocolViolation(code: code, reason: reason)
        ending = .init(code: code.rawValue, reason: reason, error: error)
        end(ending ?? .init(code: code.rawValue, reason: reason, error: error))
        let closed = context.eventLoop.makePromise(of: Void.self)
        write(.connectionClose, Self.closePayload(code: code.rawValue, reason: reason, allocator: context.channel.allocator), context: context, promise: closed)
        closed.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    private func end(_ ending: WebSocketInbox.Ending) {
        if self.ending == nil { self.ending = ending }
        inbox.end(self.ending ?? ending)
    }

    private func armCloseTimer(context: ChannelHandlerContext) {
        closeTimer?.cancel()
        closeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(options.closeTimeout)) {
            context.close(promise: nil)
        }
    }

    private func write(
        _ opcode: WebSocketOpcode, _ payload: ByteBuffer, rsv1: Bool = false, context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>?
    ) {
        let frame = WebSocketFrame(fin: true, rsv1: rsv1, opcode: opcode, maskKey: .random(), data: payload)
        guard opcode == .connectionClose else {
            context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
            return
        }
        // Nothing follows a close frame: over an HTTP/2 stream it carries END_STREAM (the event
        // goes unanswered on a TCP connection, which the server closes first).
        context.write(wrapOutboundOut(frame), promise: promise)
        context.triggerUserOutboundEvent(HTTP2StreamBytesHandler.OutputEnds(), promise: nil)
        context.flush()
    }

    /// A close frame's payload: the code, then the reason cut to fit 125 bytes on a character boundary.
    static func closePayload(code: Int, reason: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        var payload = allocator.buffer(capacity: 125)
        guard code > 0, code <= Int(UInt16.max) else { return payload }
        payload.writeInteger(UInt16(code))
        var kept = Substring(reason)
        while kept.utf8.count > 123 { kept = kept.dropLast() }
        payload.writeString(String(kept))
        return payload
    }
}

extension TimeAmount {
    /// `duration` in nanoseconds (saturating).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = .nanoseconds(overflow ? .max : product &+ attoseconds / 1_000_000_000)
    }
}
