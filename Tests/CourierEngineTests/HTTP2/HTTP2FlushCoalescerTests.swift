import NIOCore
import NIOEmbedded
import Testing

@testable import CourierEngine

/// The coalescer directly, on an embedded channel: many streams' flushes in one event-loop
/// tick reach the connection as one flush, after the writes, and none is lost.
@Suite struct HTTP2FlushCoalescerTests {
    /// Counts the flushes that pass it and keeps the writes (sits where the TLS handler would).
    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var flushes = 0
        var written: [String] = []
        var writtenAtFlush: [Int] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            written.append(String(buffer: unwrapOutboundIn(data)))
            context.write(data, promise: promise)
        }

        func flush(context: ChannelHandlerContext) {
            flushes += 1
            writtenAtFlush.append(written.count)
            context.flush()
        }
    }

    private func makeChannel() throws -> (EmbeddedChannel, FlushCounter) {
        let counter = FlushCounter()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(HTTP2FlushCoalescer())
        return (channel, counter)
    }

    @Test func flushesOfOneTickBecomeOneFlushAfterAllWrites() throws {
        let (channel, counter) = try makeChannel()
        for index in 0..<64 {
            channel.writeAndFlush(ByteBuffer(string: "stream \(index)"), promise: nil)
        }
        #expect(counter.flushes == 0, "the flush waits for the tick's other tasks")
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
        #expect(counter.writtenAtFlush == [64])
        #expect(counter.written.first == "stream 0" && counter.written.last == "stream 63")
        _ = try channel.finish()
    }

    @Test func aLaterTickGetsItsOwnFlush() throws {
        let (channel, counter) = try makeChannel()
        channel.writeAndFlush(ByteBuffer(string: "first"), promise: nil)
        channel.embeddedEventLoop.run()
        channel.writeAndFlush(ByteBuffer(string: "second"), promise: nil)
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 2)
        #expect(counter.writtenAtFlush == [1, 2])
        // Every write reached the wire, in order.
        var outbound: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            outbound.append(String(buffer: buffer))
        }
        #expect(outbound == ["first", "second"])
        _ = try channel.finish()
    }
}
