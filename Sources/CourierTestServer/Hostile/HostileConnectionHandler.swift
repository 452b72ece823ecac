import Foundation
import NIOCore
import NIOPosix

/// Runs a ``HostileScript`` on one connection: reads what its read steps wait for, writes
/// raw bytes, sleeps, stalls, resets. Event-loop confined.
final class HostileConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How the last request head framed its body.
    private enum BodyFraming {
        case none
        case length(Int)
        case chunked
    }

    private let script: HostileScript
    private let state: HostileServerState
    private var input = ByteBuffer()
    private var index = 0
    private var framing = BodyFraming.none
    /// A sleep is pending, or the script stalled or ended: reads only buffer.
    private var paused = false
    private var isActive = true
    private var pendingTask: Scheduled<Void>?

    init(script: HostileScript, state: HostileServerState) {
        self.script = script
        self.state = state
    }

    func channelActive(context: ChannelHandlerContext) {
        run(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isActive = false
        pendingTask?.cancel()
        pendingTask = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        input.writeBuffer(&bytes)
        run(context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A client that resets, or a TLS alert: nothing to answer.
        context.close(promise: nil)
    }

    private func run(context: ChannelHandlerContext) {
        while isActive && !paused {
            guard index < script.steps.count else {
                switch script.afterwards {
                case .close:
                    paused = true
                    context.close(promise: nil)
                case .stall:
                    paused = true
                case .repeatSteps:
                    // A script that never reads would repeat without end: close it instead.
                    guard script.steps.contains(.readHead) else {
                        paused = true
                        context.close(promise: nil)
                        return
                    }
                    index = 0
                }
                continue
            }
            switch script.steps[index] {
            case .readHead:
                guard let head = takeHead() else { return }
                state.received(head: head)
                framing = Self.framing(of: head)
            case .readBody:
                guard takeBody() else { return }
            case .write(let bytes):
                var buffer = context.channel.allocator.buffer(capacity: bytes.count)
                buffer.writeBytes(bytes)
                context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            case .sleep(let milliseconds):
                paused = true
                index += 1
                pendingTask = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(milliseconds)) { [self] in
                    pendingTask = nil
                    paused = false
                    run(context: context)
                }
                return
            case .stall:
                paused = true
                return
            case .reset:
                paused = true
                ConnectionReset.reset(context)
                return
            case .halfClose:
                let promise = context.eventLoop.makePromise(of: Void.self)
                promise.futureResult.assumeIsolated().whenFailure { _ in context.close(promise: nil) }
                context.close(mode: .output, promise: promise)
            case .close:
                paused = true
                context.close(promise: nil)
                return
            }
            index += 1
        }
    }

    /// The request head up to and including its blank line, removed from the input; `nil`
    /// until it has all arrived.
    private func takeHead() -> String? {
        let view = input.readableBytesView
        guard let end = Self.find([13, 10, 13, 10], in: view) else { return nil }
        let length = end - view.startIndex + 4
        return input.readString(length: length)
    }

    /// Consumes body bytes of the last head; `true` once the whole body has been read.
    private func takeBody() -> Bool {
        switch framing {
        case .none:
            return true
        case .length(let remaining):
            let taken = min(remaining, input.readableBytes)
            input.moveReaderIndex(forwardBy: taken)
            framing = remaining == taken ? .none : .length(remaining - taken)
            return remaining == taken
        case .chunked:
            // The last chunk and an empty trailer; good enough for the clients under test.
            let view = input.readableBytesView
            guard let end = Self.find(Array("0\r\n\r\n".utf8), in: view) else { return false }
            input.moveReaderIndex(forwardBy: end - view.startIndex + 5)
            framing = .none
            return true
        }
    }

    private static func framing(of head: String) -> BodyFraming {
        var framing = BodyFraming.none
        for line in head.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == "transfer-encoding", value.lowercased().contains("chunked") { return .chunked }
            if name == "content-length", let length = Int(value), length >= 0 { framing = .length(length) }
        }
        return framing
    }

    private static func find(_ needle: [UInt8], in view: ByteBufferView) -> Int? {
        guard view.count >= needle.count else { return nil }
        var start = view.startIndex
        let last = view.endIndex - needle.count
        while start <= last {
            if view[start] == needle[0] && view[start..<(start + needle.count)].elementsEqual(needle) { return start }
            start += 1
        }
        return nil
    }

}
