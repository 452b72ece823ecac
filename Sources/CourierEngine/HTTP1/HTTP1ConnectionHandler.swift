import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOSSL
import NIOTLS
import Synchronization

/// The I/O around ``HTTP1ConnectionStateMachine``: writes requests, reads responses, applies
/// backpressure both ways, runs the request's clocks and reports to the pool.
///
/// Lives on its channel's event loop; everything else reaches it through `eventLoop.execute`.
final class HTTP1ConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// Per-request state, confined to the event loop.
    final class Exchange {
        let execution: RequestExecution
        var metrics: EngineMetrics
        let expectedBodyLength: Int64?
        var bodyBytesSent: Int64 = 0
        var bodyProducer: Task<Void, Never>?
        /// The streamed body's chunks on their way from the producer (nil for bytes).
        var bodyPipe: RequestBodyPipe?
        var progressThrottle: UploadProgressThrottle
        var lastActivity = NIODeadline.now()
        var decompressing = false
        var decompressedLimit = Int.max

        init(execution: RequestExecution, metrics: EngineMetrics, expectedBodyLength: Int64?) {
            self.execution = execution
            self.metrics = metrics
            self.expectedBodyLength = expectedBodyLength
            self.progressThrottle = UploadProgressThrottle(expected: expectedBodyLength)
        }
    }

    /// Called when a request ends: release the connection (reusable or not) before the caller
    /// hears about it, so a sequential caller finds the connection idle.
    var onRequestEnded: ((_ reusable: Bool) -> Void)?
    /// Called when the channel is gone.
    var onClosed: (() -> Void)?
    /// Fulfilled once the connection can carry requests (after the TLS handshake, if any).
    var readyPromise: EventLoopPromise<Void>?
    /// Set by the TLS verifier when it rejected the chain, so the handshake error names why.
    var trustRejection: EngineError?
    /// Connection facts copied into every request's metrics.
    var info = ConnectionInfo()
    let decompressionMaximumSize: Int?
    /// The host this connection serves (for error messages).
    let host: String
    /// The protocol reported in metrics before a response says otherwise: `http/1.1`, or `h2`
    /// when this handler runs one HTTP/2 stream.
    var protocolName = "http/1.1"
    /// For an HTTP/2 stream: its connection's observer. A stream closed above the last stream
    /// id of the server's `GOAWAY` was never processed, whatever `RST_STREAM` code came with it
    /// (servers send `CANCEL` as well as `REFUSED_STREAM`), so its error becomes the retryable
    /// refusal.
    var http2Observer: HTTP2ConnectionObserver?
    /// The server's own reason phrases, in an HTTP/1 pipeline (nil for an HTTP/2 stream, whose
    /// heads have none).
    var reasonPhrases: ReasonPhraseRecorder?

    var stateMachine = HTTP1ConnectionStateMachine()
    /// The clock check (idle timeout and total deadline): one per connection, kept from one
    /// exchange to the next, so a kept-alive connection's requests don't each schedule and
    /// cancel timers (a session request has both: its idle timeout and a 7-day resource
    /// deadline). When it fires it judges the exchange running then, and arms itself again for
    /// that exchange's next due time if needed.
    var clockCheck: (timer: Scheduled<Void>, at: NIODeadline)?
    var handshakeCompleted = false
    var setupError: EngineError? {
        didSet { setupErrorBox.set(setupError) }
    }
    /// The setup error, readable from the connecting task after the handler left the pipeline.
    let setupErrorBox: SetupErrorBox
    var isClosed = false
    /// An HTTP/2 stream's closure with a reset code that no violation claimed yet (see
    /// `awaitClaim(on:context:)`), and whether the stream's channel went inactive meanwhile.
    var resetAwaitingClaim: NIOHTTP2Errors.StreamClosed?
    var inactiveWhileAwaitingClaim = false
    var context: ChannelHandlerContext?
    var exchange: Exchange?
    var pendingRead = false

    /// Through a proxy without a tunnel (plain http): the `scheme://authority` put before each
    /// request target (absolute form), and the `Proxy-Authorization` value.
    let absoluteFormProxy: (origin: String, authorization: String?)?

    init(
        host: String, decompressionMaximumSize: Int?, setupErrorBox: SetupErrorBox,
        absoluteFormProxy: (origin: String, authorization: String?)? = nil
    ) {
        self.absoluteFormProxy = absoluteFormProxy
        self.host = host
        self.setupErrorBox = setupErrorBox
        self.decompressionMaximumSize = decompressionMaximumSize
    }

    // MARK: - Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if resetAwaitingClaim != nil {
            // The stream's reset is attributed once the loop comes round; its end waits for that.
            inactiveWhileAwaitingClaim = true
            return
        }
        isClosed = true
        clockCheck?.timer.cancel()
        clockCheck = nil
        readyPromise?.fail(setupError ?? EngineError.connectionLost("the connection closed during setup"))
        readyPromise = nil
        perform(stateMachine.channelInactive())
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted = tlsEvent {
            handshakeCompleted = true
            readyPromise?.succeed(())
            readyPromise = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let engineError: EngineError
        if isUnprocessedStream(error, context: context) {
            engineError = EngineErrorMapping.http2StreamRefused
        } else if let closed = error as? NIOHTTP2Errors.StreamClosed, http2Observer != nil {
            if let violation = http2Observer?.claimViolation(resetWith: closed.errorCode) {
                // NIOHTTP2 reset this stream over what the server sent: Courier ended it.
                engineError = .http2ProtocolViolation(violation)
            } else {
                awaitClaim(on: closed, context: context)
                return
            }
        } else if http2Observer != nil, case .http2ProtocolViolation(var violation) = mapError(error) {
            // Raised in this stream's own pipeline: closing the stream resets it, nothing more.
            violation.scope = .stream
            engineError = .http2ProtocolViolation(violation)
        } else {
            engineError = mapError(error)
        }
        fail(with: engineError, context: context)
    }

    /// Ends the exchange (or the setup) with `engineError`.
    func fail(with engineError: EngineError, context: ChannelHandlerContext) {
        if stateMachine.requestsServed == 0, setupError == nil {
            setupError = engineError
        }
        if let readyPromise {
            self.readyPromise = nil
            readyPromise.fail(engineError)
            context.close(promise: nil)
            return
        }
        perform(stateMachine.errorCaught(engineError))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let exchange {
            exchange.lastActivity = .now()
            if exchange.metrics.responseStart == nil {
                exchange.metrics.responseStart = Date()
            }
        }
        switch unwrapInboundIn(data) {
        case .head(var head):
            reasonPhrases?.restorePhrase(in: &head)
            exchange?.metrics.responseHeaderBytesReceived += Self.approximateSize(of: head)
            if let exchange, !(100..<200).contains(head.status.code) {
                exchange.metrics.networkProtocolName =
                    head.version.major == 2 ? "h2" : head.version.minor == 0 ? "http/1.0" : "http/1.1"
                if let encoding = head.headers.first(name: "content-encoding")?.lowercased(),
                    encoding == "gzip" || encoding == "deflate" || encoding == "x-gzip",
                    let limit = decompressionMaximumSize
                {
                    exchange.decompressing = true
                    exchange.decompressedLimit = limit
                }
                reportMetrics(of: exchange)
            }
            perform(stateMachine.receivedResponseHead(head))
        case .body(let buffer):
            if let exchange {
                exchange.metrics.responseBodyBytesReceived += Int64(buffer.readableBytes)
                if exchange.decompressing, exchange.metrics.responseBodyBytesReceived > exchange.decompressedLimit {
                    abort(
                        exchange.execution,
                        with: .decompressionLimitExceeded(
                            "the body expanded past \(exchange.decompressedLimit) bytes"
                        )
                    )
                    return
                }
            }
            let action = stateMachine.receivedBodyPart()
            if case .forwardBodyPart = action, let exchange {
                exchange.execution.emit(.bodyPart(buffer))
            }
        case .end:
            reasonPhrases?.responseEnded()
            exchange?.metrics.responseEnd = Date()
            perform(stateMachine.receivedResponseEnd())
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        updateBodyPipe()
        context.fireChannelWritabilityChanged()
    }

    // MARK: - Outbound

    func read(context: ChannelHandlerContext) {
        if let exchange, exchange.execution.isReadingPaused {
            pendingRead = true
            return
        }
        context.read()
    }

    /// Completes `promise` once the connection can carry requests: at once for plain HTTP, after
    /// the handshake for TLS, or with the setup error if the connection already failed.
    func waitUntilReady(tls: Bool, promise: EventLoopPromise<Void>) {
        if isClosed || setupError != nil {
            promise.fail(setupError ?? EngineError.connectionLost("the connection closed during setup"))
        } else if !tls || handshakeCompleted {
            promise.succeed(())
        } else {
            readyPromise = promise
        }
    }

    // MARK: - Requests

    /// Starts `execution` on this (idle) connection.
    func start(_ execution: RequestExecution, reused: Bool) {
        guard let context, stateMachine.isIdle else {
            // The connection died between the pool's decision and now: a retry candidate.
            fail(execution, .connectionLost("the connection closed before the request was sent"), replay: reused ? .unsent : .none)
            onRequestEnded?(false)
            return
        }
        var metrics = EngineMetrics(fetchStart: execution.fetchStart)
        metrics.isReusedConnection = reused
        metrics.record(info, includingSetup: !reused)
        if protocolName == "h2", let host = execution.coalescedHost { metrics.coalescedConnectionHost = host }
        metrics.networkProtocolName = protocolName

        let request = execution.request
        let body = request.body
        let expectedLength = execution.bodyLength
        // `consume`: the exchange then holds the metrics' only copy, which it updates in place.
        let exchange = Exchange(execution: execution, metrics: consume metrics, expectedBodyLength: expectedLength)
        self.exchange = exchange
        var head = Self.makeHead(
            for: request, target: execution.target, bodyLength: expectedLength, hasBody: body != nil,
            acceptsCompression: decompressionMaximumSize != nil, proxyAuthorization: absoluteFormProxy?.authorization)
        if let absoluteFormProxy {
            head.uri = absoluteFormProxy.origin + head.uri
        } else if execution.key.proxy != nil, head.headers.contains(name: "proxy-authorization") {
            // Through a tunnel (CONNECT or SOCKS5) the origin reads the head: the proxy's
            // credentials are not the origin's (see EngineProxy).
            head.headers.remove(name: "proxy-authorization")
        }
        let closeAfter = !head.isKeepAlive
        armTimers(for: exchange, context: context)

        let action = stateMachine.startRequest(
            hasBody: body != nil,
            expectsContinue: request.expectsContinue,
            closeAfter: closeAfter
        )
        exchange.metrics.requestStart = Date()
        exchange.metrics.requestHeaderBytesSent = Self.approximateSize(of: head)
        // Sent whole, the request's end goes out below in this same call, and the head's
        // snapshot carries its start and end (see `requestSent`).
        if !sendsHeadAndEndTogether(request) { reportMetrics(of: exchange) }
        if protocolName == "h2" {
            // An HTTP/2 stream can refuse the head without closing anything (a GOAWAY came
            // first): fail the request instead of waiting for its idle timeout.
            let headWritten = context.eventLoop.makePromise(of: Void.self)
            context.write(wrapOutboundOut(.head(head)), promise: headWritten)
            headWritten.futureResult.assumeIsolated().whenFailure { [weak self] error in
                guard let self, self.exchange === exchange else { return }
                self.perform(self.stateMachine.errorCaught(self.mapError(error)))
            }
        } else if reused && !request.isIdempotent {
            // Whether the head left decides whether the request may go again if the server
            // closed this connection while it was idle: nothing written can be replayed.
            let headWritten = context.eventLoop.makePromise(of: Void.self)
            context.write(wrapOutboundOut(.head(head)), promise: headWritten)
            headWritten.futureResult.assumeIsolated().whenFailure { [weak self] error in
                guard let self, self.exchange === exchange else { return }
                self.perform(self.stateMachine.requestHeadWriteFailed(self.mapError(error)))
            }
        } else {
            context.write(wrapOutboundOut(.head(head)), promise: nil)
        }
        if case .sendRequestHead(let sendBody) = action {
            if body == nil {
                writeEnd(exchange, context: context)
            } else if sendBody {
                startBody(exchange, context: context)
            } else {
                context.flush()
            }
        }
    }

    /// Hands the caller `exchange`'s metrics so far, when its request asked for them
    /// (``EngineRequest/reportsMetricsUpdates``).
    func reportMetrics(of exchange: Exchange) {
        guard exchange.execution.request.reportsMetricsUpdates else { return }
        var snapshot = exchange.metrics.detached()
        let replayed = exchange.execution.replayedAttemptsSoFar
        if !replayed.isEmpty { snapshot.replayedAttempts = replayed }
        exchange.execution.emit(.metricsUpdated(snapshot))
    }

    /// Cancels or times out `execution` if it is the one running here.
    func abort(_ execution: RequestExecution, with error: EngineError) {
        guard let exchange, exchange.execution === execution else { return }
        perform(stateMachine.abort(error))
    }

    /// The caller paused or resumed the transfer.
    func pauseStateChanged(_ execution: RequestExecution) {
        guard let exchange, exchange.execution === execution, let context else { return }
        if !execution.isReadingPaused, pendingRead {
            pendingRead = false
            context.read()
        }
        updateBodyPipe()
    }

    /// Closes the connection if it is idle (pool idle timeout or shutdown).
    func closeIfIdle() {
        perform(stateMachine.close())
    }

    // MARK: - Actions

    func perform(_ action: HTTP1ConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .sendRequestHead:
            preconditionFailure("sendRequestHead is handled by start(_:reused:)")
        case .sendBody:
            if let exchange, let context {
                startBody(exchange, context: context)
            }
        case .forwardResponseHead(let head, let abandonUpload):
            guard let exchange else { return }
            if head.status == .misdirectedRequest, exchange.execution.coalescedHost != nil {
                // Another host's connection, and the server won't answer this one on it: again,
                // on a connection of its own.
                exchange.execution.markMisdirected()
                perform(stateMachine.abort(EngineErrorMapping.misdirectedOnCoalescedConnection))
                return
            }
            if abandonUpload {
                exchange.bodyPipe?.fail(.cancelled)
                exchange.bodyProducer?.cancel()
            }
            exchange.execution.emit(.responseHead(head))
        case .forwardBodyPart:
            break
        case .succeedRequest(let disposition):
            guard let exchange = takeExchange() else { return }
            if disposition == .close {
                context?.close(promise: nil)
            }
            onRequestEnded?(disposition == .returnToPool)
            exchange.execution.finish(.success(()), metrics: exchange.metrics)
        case .failRequest(let error, _, let replay):
            guard let exchange = takeExchange() else { return }
            exchange.bodyPipe?.fail(error)
            context?.close(promise: nil)
            onRequestEnded?(false)
            if exchange.metrics.responseEnd == nil, exchange.metrics.responseStart != nil {
                exchange.metrics.responseEnd = Date()
            }
            fail(exchange.execution, error, replay: replay, metrics: exchange.metrics)
        case .closeConnection:
            context?.close(promise: nil)
        case .connectionClosed:
            let onClosed = self.onClosed
            self.onClosed = nil
            onClosed?()
        }
    }

    /// Hook the pool sets to send a failed request again on a new connection when it may
    /// (returns whether it did); nil means "never".
    var onRetry: ((RequestExecution, ReplayEligibility) -> Bool)?

    func takeExchange() -> Exchange? {
        guard let exchange else { return nil }
        self.exchange = nil
        exchange.bodyPipe?.fail(.cancelled)
        exchange.bodyProducer?.cancel()
        if pendingRead, let context {
            pendingRead = false
            context.read()
        }
        return exchange
    }

    // MARK: - Clocks

    func armTimers(for exchange: Exchange, context: ChannelHandlerContext) {
        // A check already due by then serves this exchange too (it re-arms for it).
        if let due = Self.nextClockCheck(for: exchange), clockCheck.map({ $0.at > due }) ?? true {
            scheduleClockCheck(at: due, on: context.eventLoop)
        }
    }

    /// When `exchange` must be looked at next: its idle timeout's due time or its deadline,
    /// whichever comes first (nil: it has neither).
    private static func nextClockCheck(for exchange: Exchange) -> NIODeadline? {
        let idle = exchange.execution.idleTimeout
        let idleDue = idle.nanoseconds > 0 ? exchange.lastActivity + idle : nil
        switch (idleDue, exchange.execution.request.deadline) {
        case (let idleDue?, let deadline?): return min(idleDue, deadline)
        case (let idleDue?, nil): return idleDue
        case (nil, let deadline?): return deadline
        case (nil, nil): return nil
        }
    }

    func scheduleClockCheck(at due: NIODeadline, on loop: any EventLoop) {
        clockCheck?.timer.cancel()
        let timer = loop.assumeIsolated().scheduleTask(deadline: due) { [weak self] in
            guard let self else { return }
            self.clockCheck = nil
            // The exchange running now, if any: an ended one's check lapses here.
            guard let exchange = self.exchange else { return }
            let now = NIODeadline.now()
            if let deadline = exchange.execution.request.deadline, deadline <= now {
                self.abort(exchange.execution, with: .timedOut(.deadline))
                return
            }
            let idle = exchange.execution.idleTimeout
            if idle.nanoseconds > 0 {
                if exchange.execution.isReadingPaused || exchange.execution.isUploadPaused {
                    exchange.lastActivity = now  // a pause the caller asked for is not idleness
                } else if exchange.lastActivity + idle <= now {
                    self.abort(exchange.execution, with: .timedOut(.idle))
                    return
                }
            }
            if let next = Self.nextClockCheck(for: exchange) {
                self.scheduleClockCheck(at: next, on: loop)
            }
        }
        clockCheck = (timer, due)
    }

    // MARK: - Helpers

    func mapError(_ error: any Error) -> EngineError {
        if let trustRejection { return trustRejection }
        return EngineErrorMapping.map(error, host: host)
    }
}

extension String {
    @inline(__always)
    func caseInsensitiveEquals(_ other: String) -> Bool {
        self.utf8.count == other.utf8.count && self.lowercased() == other
    }
}
