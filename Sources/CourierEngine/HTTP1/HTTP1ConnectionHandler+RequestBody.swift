import Foundation
import NIOCore
import NIOHTTP1

/// The request body on an HTTP/1.1 connection: the producer that fills the body pipe, the drain
/// that writes what it holds while the channel is writable, upload progress, and the end of
/// the request.
extension HTTP1ConnectionHandler {
    func startBody(_ exchange: Exchange, context: ChannelHandlerContext) {
        guard let body = exchange.execution.request.body else {
            writeEnd(exchange, context: context)
            return
        }
        switch body.storage {
        case .bytes(let buffer):
            let count = Int64(buffer.readableBytes)
            exchange.bodyBytesSent = count
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: promise)
            promise.futureResult.assumeIsolated().whenSuccess { [weak self] in
                guard let self, self.exchange === exchange else { return }
                self.bodyBytesWritten(count, exchange)
            }
            writeEnd(exchange, context: context)
        case .file(let path, let offset, let length):
            let total = exchange.expectedBodyLength ?? length ?? 0
            // Opened now, off the event loop, and sent only if the path still names the file
            // checked when the request was made (HTTPEngine.execute): it may name another file,
            // or a FIFO, by now.
            let checked = exchange.execution.bodyFile
            startProducer(exchange, context: context) { writer in
                guard let checked else {
                    throw EngineError.invalidBody("\(path) was not checked when the request was made")
                }
                let reader = try FileChunkReader(path: path, expecting: checked)
                var position = offset
                var remaining = total
                while remaining > 0 {
                    let chunk = try await reader.read(
                        at: position,
                        count: Int(min(remaining, Int64(FileChunkReader.sliceSize))),
                        allocator: ByteBufferAllocator()
                    )
                    if chunk.readableBytes == 0 {
                        throw EngineError.invalidBody("\(path) is shorter than the \(total) bytes announced")
                    }
                    position += Int64(chunk.readableBytes)
                    remaining -= Int64(chunk.readableBytes)
                    try await writer.write(chunk)
                }
            }
        case .stream(_, let produce):
            startProducer(exchange, context: context, produce)
        }
    }

    /// The write buffer an HTTP/1 connection keeps while it streams a body (set when the first
    /// streamed body starts; kept for the connection's later requests, which it does not slow).
    /// The drain writes until the channel holds `high` bytes and flushes; NIO's default (32 /
    /// 64 KiB) made that one `writev` of ~128 KiB, a flush, a write promise and two writability
    /// events per 128 KiB, and on loopback the kernel's cost per `writev` (pushing the frames and
    /// waking the reader) made each MiB cost the engine 160–175 µs of CPU against
    /// AsyncHTTPClient's ~110 (upload-256m against the test server). With 1 MiB the same upload
    /// takes 87–106 µs per MiB. Memory stays bounded: at most `high` plus a chunk here, and
    /// ``RequestBodyPipe/highWater`` in the pipe.
    static let uploadWriteWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 512 << 10, high: 1 << 20)

    /// Runs the body's producer in a task; its chunks reach the event loop in batches through a
    /// ``RequestBodyPipe`` (one hop, one flush and one write promise per batch).
    func startProducer(
        _ exchange: Exchange,
        context: ChannelHandlerContext,
        _ produce: @escaping @Sendable (BodyWriter) async throws -> Void
    ) {
        context.flush()
        if protocolName != "h2" {
            // Flow control decides an HTTP/2 stream's writability; an HTTP/1 socket's is
            // NIO's buffer, 64 KiB by default: too small to batch (see uploadWriteWaterMark).
            try? context.channel.syncOptions?.setOption(
                ChannelOptions.writeBufferWaterMark, value: Self.uploadWriteWaterMark)
        }
        let loop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        let execution = exchange.execution
        let pipe = RequestBodyPipe(loop: loop) { handler.value.drainBody(for: execution) }
        exchange.bodyPipe = pipe
        updateBodyPipe()
        let writer = BodyWriter { chunk in try await pipe.write(chunk) }
        exchange.bodyProducer = Task {
            do {
                try await produce(writer)
                pipe.finish()
            } catch {
                // When the exchange failed the pipe, it already decided the request's fate.
                guard !pipe.hasFailed else { return }
                let engineError = (error as? EngineError) ?? .invalidBody("the body stream failed: \(error)")
                pipe.fail(engineError)
                loop.execute { handler.value.abort(execution, with: engineError) }
            }
        }
    }

    /// On the event loop: writes every chunk queued in the body's pipe, one flush per batch,
    /// until the pipe is empty (then ends the body if the producer returned).
    func drainBody(for execution: RequestExecution) {
        guard let exchange, exchange.execution === execution, let pipe = exchange.bodyPipe else { return }
        guard let context, case .running(let request) = stateMachine.state, request.upload == .sending else {
            pipe.fail(.cancelled)
            return
        }
        if execution.isUploadPaused {
            pipe.park()
            return
        }
        // Write while the channel takes more, flushing when it fills up; leave the rest queued
        // in the pipe (so the channel never holds more than its high-water mark plus a chunk:
        // a suspended or slow upload has little in flight). One write promise per flush: an
        // empty write after the batch (the encoder frames no empty chunk; it completes in
        // order, once the batch's bytes are written). A bounded number of chunks per turn, so
        // other channels on this loop get theirs.
        //
        // Over HTTP/2 there is no empty write: it would be an empty DATA frame, and servers
        // count those as abuse (NIOHTTP2 allows one in a row per stream, then resets the
        // stream), which failed a streamed upload at its third batch. Each chunk carries its
        // own promise there instead.
        let isStream = protocolName == "h2"
        var count: Int64 = 0
        func flushBatch() {
            if count > 0 {
                exchange.bodyBytesSent += count
                exchange.execution.bodyWriteBatches.add(1, ordering: .relaxed)
                let batch = count
                count = 0
                if !isStream {
                    let promise = context.eventLoop.makePromise(of: Void.self)
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer()))), promise: promise)
                    promise.futureResult.assumeIsolated().whenSuccess { [weak self] in
                        guard let self, self.exchange === exchange else { return }
                        self.bodyBytesWritten(batch, exchange)
                    }
                }
            }
            context.flush()
        }
        // What a handler keeps until the flush (NIOSSL does) is not in the channel's count, so
        // its writability can't stop the turn: flush once the batch would fill the channel.
        // (An HTTP/2 stream's writability is its flow-control window; its channel traps on the
        // option.)
        func room() -> Int64 {
            guard !isStream else { return .max }
            let buffered = (try? context.channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 0
            return Int64(Self.uploadWriteWaterMark.high) - Int64(buffered)
        }
        var batchRoom = room()
        for _ in 0..<256 {
            if count >= batchRoom {
                flushBatch()
                guard self.exchange === exchange else { return }
                batchRoom = room()
            }
            if !context.channel.isWritable {
                flushBatch()
                guard self.exchange === exchange else { return }
                if !context.channel.isWritable {
                    pipe.park()
                    // Writability changes arrive on this loop: none can have been missed.
                    updateBodyPipe()
                    return
                }
            }
            switch pipe.next() {
            case .empty(let ended):
                flushBatch()
                if ended, self.exchange === exchange { finishBody(for: execution) }
                return
            case .chunk(let chunk):
                let size = Int64(chunk.readableBytes)
                if let expected = exchange.expectedBodyLength, exchange.bodyBytesSent + count + size > expected {
                    abort(execution, with: .invalidBody("the body stream wrote more than the \(expected) bytes announced"))
                    return
                }
                if isStream {
                    let promise = context.eventLoop.makePromise(of: Void.self)
                    context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: promise)
                    promise.futureResult.assumeIsolated().whenSuccess { [weak self] in
                        guard let self, self.exchange === exchange else { return }
                        self.bodyBytesWritten(size, exchange)
                    }
                } else {
                    context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
                }
                count += size
            }
        }
        flushBatch()
        guard self.exchange === exchange else { return }
        context.eventLoop.execute { [handler = NIOLoopBound(self, eventLoop: context.eventLoop)] in
            handler.value.drainBody(for: execution)
        }
    }

    /// `count` more body bytes reached the socket: metrics, the idle clock, and (throttled)
    /// the caller's progress.
    func bodyBytesWritten(_ count: Int64, _ exchange: Exchange) {
        exchange.metrics.requestBodyBytesSent += count
        let now = NIODeadline.now()
        exchange.lastActivity = now
        reportUploadProgress(exchange, now: now, final: false)
    }

    func reportUploadProgress(_ exchange: Exchange, now: NIODeadline, final: Bool) {
        let sent = exchange.metrics.requestBodyBytesSent
        guard exchange.progressThrottle.shouldReport(sent: sent, now: now.uptimeNanoseconds, final: final) else { return }
        exchange.execution.emit(.uploadProgress(sent: sent, expected: exchange.expectedBodyLength))
    }

    func finishBody(for execution: RequestExecution) {
        guard let context, let exchange, exchange.execution === execution,
            case .running(let request) = stateMachine.state, request.upload == .sending
        else { return }
        if let expected = exchange.expectedBodyLength, exchange.bodyBytesSent != expected {
            abort(
                execution,
                with: .invalidBody("the body had \(exchange.bodyBytesSent) bytes, \(expected) were announced")
            )
            return
        }
        writeEnd(exchange, context: context)
    }

    /// Whether `request` is sent whole by handing its head and end to the channel together:
    /// HTTP/1 without a body (an HTTP/2 stream waits for its end's write to succeed).
    func sendsHeadAndEndTogether(_ request: EngineRequest) -> Bool {
        request.body == nil && protocolName != "h2"
    }

    func writeEnd(_ exchange: Exchange, context: ChannelHandlerContext) {
        if sendsHeadAndEndTogether(exchange.execution.request) {
            // HTTP/1 without a body: the end follows the head in the same flush, and the request
            // counts as sent once both are handed to the channel. Writes leave in order, so
            // nothing of a later request can overtake them, and a write that fails closes the
            // connection, which fails the request. (No promise: it cost four allocations per
            // request. An HTTP/2 stream can fail a write without closing, so it keeps one.)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            requestSent(exchange)
            return
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        promise.futureResult.assumeIsolated().whenSuccess { [weak self] in
            guard let self, self.exchange === exchange else { return }
            if exchange.execution.request.body != nil {
                self.reportUploadProgress(exchange, now: .now(), final: true)
            }
            self.requestSent(exchange)
        }
    }

    /// The request's last byte is written (or, without a body, handed to the channel).
    func requestSent(_ exchange: Exchange) {
        exchange.metrics.requestEnd = Date()
        exchange.lastActivity = .now()
        // Sent whole, its start and end are one instant apart: the head's snapshot (or the
        // failure's metrics) carries both, one snapshot per request fewer.
        if !sendsHeadAndEndTogether(exchange.execution.request) { reportMetrics(of: exchange) }
        perform(stateMachine.requestBodySent())
    }

    /// Tells the body's pipe whether the connection takes more (writable, not paused), and
    /// drains it here when that opened it (no hop: writability changes arrive on the loop).
    func updateBodyPipe() {
        guard let context, let exchange, let pipe = exchange.bodyPipe else { return }
        let paused = exchange.execution.isUploadPaused
        if pipe.setOpen(context.channel.isWritable && !paused, paused: paused) {
            drainBody(for: exchange.execution)
        }
    }
}
