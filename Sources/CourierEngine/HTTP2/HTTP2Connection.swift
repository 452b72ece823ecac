import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import Synchronization

/// An open HTTP/2 connection in the pool: one channel, many streams.
///
/// Each request runs on its own stream channel whose pipeline turns HTTP/2 frames into the
/// HTTP/1-style parts the engine's per-request handler (``HTTP1ConnectionHandler``) already
/// speaks, so timers, backpressure (the stream's flow-control window), decompression, metrics
/// and events are the same for both protocols. A stream's exchange is wrapped in an
/// ``HTTP1Connection`` value so cancellation and pausing reach it the usual way; cancelling
/// closes the stream channel, which resets that stream (`RST_STREAM`) and nothing else.
///
/// Thread-safe: requests arrive from any thread and hop onto the channel's event loop.
final class HTTP2Connection: Sendable {
    let id: ConnectionPoolStateMachine.ConnectionID
    let key: ConnectionKey
    let channel: any Channel
    private let multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>
    private let observer: NIOLoopBound<HTTP2ConnectionObserver>
    private let settings: StreamSettings
    /// Whether the server allows RFC 8441 extended CONNECT streams (WebSockets).
    let extendedConnect: HTTP2ExtendedConnectSupport
    private let state: Mutex<State>
    /// Requests submitted from off the loop, waiting for the task that starts them (queued
    /// by the submit that found this empty; that task empties it).
    private let pendingStarts = Mutex<[RequestExecution]>([])

    /// What each stream's pipeline needs.
    struct StreamSettings: Sendable {
        var host: String
        var isTLS: Bool
        var info: ConnectionInfo
        /// Decompression: the size limit and expansion ratio, or nil when disabled.
        var decompression: (maximumSize: Int, ratio: Int)?
    }

    /// The pool's hooks, set once before the first request.
    struct Callbacks: Sendable {
        var streamEnded: @Sendable () -> Void
        var retry: @Sendable (RequestExecution) -> Bool
        var settingsChanged: @Sendable (Int) -> Void
        var goAway: @Sendable () -> Void
        var closed: @Sendable () -> Void
    }

    private struct State {
        var streamsStarted = 0
        var idle = IdleTimerBookkeeping()
        var callbacks: Callbacks?
        var openStreams: [ObjectIdentifier: (stream: HTTP1Connection, execution: RequestExecution)] = [:]
    }

    init(
        id: ConnectionPoolStateMachine.ConnectionID,
        key: ConnectionKey,
        channel: any Channel,
        multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>,
        observer: NIOLoopBound<HTTP2ConnectionObserver>,
        settings: StreamSettings
    ) {
        self.id = id
        self.key = key
        self.channel = channel
        self.eventLoop = channel.eventLoop
        self.multiplexer = multiplexer
        self.observer = observer
        self.extendedConnect = observer.value.extendedConnect
        self.settings = settings
        self.state = Mutex(State())
    }

    /// The channel's event loop, kept (as ``HTTP1Connection/eventLoop``: read through the
    /// channel, each use retained the loop object from the caller's thread).
    let eventLoop: any EventLoop

    /// The server's current stream limit and whether it already sent `GOAWAY` (on the loop).
    var currentLimits: (maximumStreams: Int, goingAway: Bool) {
        (observer.value.maximumStreams ?? HTTP2ConnectionObserver.defaultMaximumStreams, observer.value.goingAway)
    }

    /// Connects the connection to the pool. Must run on the event loop, before the first request.
    func installCallbacks(_ callbacks: Callbacks) {
        state.withLock { $0.callbacks = callbacks }
        let observer = self.observer.value
        observer.onSettingsChanged = { callbacks.settingsChanged($0) }
        observer.onGoAway = { callbacks.goAway() }
        observer.onClosed = { callbacks.closed() }
        observer.onConnectionError = { [weak self] error in self?.failAllStreams(error) }
    }

    /// A connection-level error: every running stream fails with it, then the channel closes.
    private func failAllStreams(_ error: EngineError) {
        let streams = state.withLock { Array($0.openStreams.values) }
        for (stream, execution) in streams {
            stream.abort(execution, with: error)
        }
        let channel = self.channel
        channel.eventLoop.execute { channel.close(promise: nil) }
    }

    /// Runs `execution` on a new stream.
    ///
    /// From off the loop, requests queue and one loop task starts every request queued by the
    /// time it runs: callers resumed together (``ResumeBatch``) submit their next requests
    /// together, and those streams then share a task and a flush instead of one of each.
    func execute(_ execution: RequestExecution) {
        if eventLoop.inEventLoop {
            startStream(execution)
            return
        }
        let scheduleDrain = pendingStarts.withLock { pending in
            pending.append(execution)
            return pending.count == 1
        }
        if scheduleDrain {
            eventLoop.execute { self.startPendingStreams() }
        }
    }

    private func startPendingStreams() {
        var batch: [RequestExecution] = []
        pendingStarts.withLock { swap(&batch, &$0) }
        for execution in batch {
            startStream(execution)
        }
    }

    private func startStream(_ execution: RequestExecution) {
        let (number, callbacks) = state.withLock { state in
            state.idle.markBusy()
            state.streamsStarted += 1
            return (state.streamsStarted, state.callbacks)
        }
        guard let callbacks else {
            preconditionFailure("an HTTP/2 connection ran a request before the pool wired it")
        }
        let settings = self.settings
        if observer.value.goingAway || observer.value.isClosed {
            // Leased before the GOAWAY (or the close) was seen: the server never got it.
            callbacks.streamEnded()
            if !callbacks.retry(execution) {
                execution.finish(.failure(EngineErrorMapping.http2StreamRefused), metrics: nil)
            }
            return
        }
        let promise = eventLoop.makePromise(of: (any Channel).self)
        let observer = self.observer
        multiplexer.value.createStreamChannel(promise: promise) { stream in
            stream.eventLoop.makeCompletedFuture {
                let sync = stream.pipeline.syncOperations
                let connectionObserver = observer.value
                try sync.addHandler(HTTP2StreamWindowGuard { connectionObserver.peerInitialWindowSize })
                try sync.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: settings.isTLS ? .https : .http))
                if let decompression = settings.decompression {
                    try sync.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(decompression.ratio)))
                }
                let handler = HTTP1ConnectionHandler(
                    host: settings.host,
                    decompressionMaximumSize: settings.decompression?.maximumSize,
                    setupErrorBox: SetupErrorBox()
                )
                handler.info = settings.info
                handler.protocolName = "h2"
                handler.http2Observer = observer.value
                try sync.addHandler(handler)
            }
        }
        let loop = eventLoop
        promise.futureResult.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let stream):
                guard let handler = try? stream.pipeline.syncOperations.handler(type: HTTP1ConnectionHandler.self) else {
                    stream.close(promise: nil)
                    callbacks.streamEnded()
                    execution.finish(.failure(.connectionLost("the HTTP/2 stream could not be set up")), metrics: nil)
                    return
                }
                let exchange = HTTP1Connection(
                    id: self.id, key: self.key, channel: stream, handler: NIOLoopBound(handler, eventLoop: loop))
                let streamID = ObjectIdentifier(exchange)
                self.state.withLock { $0.openStreams[streamID] = (exchange, execution) }
                var ended = false
                handler.onRequestEnded = { [weak self] _ in
                    guard !ended else { return }
                    ended = true
                    self?.state.withLock { _ = $0.openStreams.removeValue(forKey: streamID) }
                    callbacks.streamEnded()
                }
                handler.onRetry = { execution, _ in callbacks.retry(execution) }
                guard execution.markRunning(on: exchange) else {
                    // Cancelled while the stream was being opened: nothing was sent.
                    stream.close(promise: nil)
                    handler.onRequestEnded?(true)
                    return
                }
                handler.start(execution, reused: number > 1)
            case .failure(let error):
                callbacks.streamEnded()
                // Nothing was sent on a stream that could not be opened: it may go elsewhere.
                if callbacks.retry(execution) { return }
                execution.finish(.failure(EngineErrorMapping.map(error, host: settings.host)), metrics: nil)
            }
        }
    }

    /// The connection's facts (addresses, TLS, setup timings) as its streams report them.
    var info: ConnectionInfo { settings.info }

    /// Opens a stream that is not a request (an RFC 8441 extended CONNECT: a WebSocket), its
    /// pipeline set up by `initialize`. The pool has leased the stream: it is released when
    /// the stream's channel closes, or at once when the stream cannot be opened.
    func openStream(
        _ initialize: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel> {
        eventLoop.flatSubmit {
            let callbacks = self.state.withLock { state in
                state.idle.markBusy()
                state.streamsStarted += 1
                return state.callbacks
            }
            let promise = self.eventLoop.makePromise(of: (any Channel).self)
            if self.observer.value.goingAway || self.observer.value.isClosed {
                promise.fail(EngineErrorMapping.http2StreamRefused)
            } else {
                self.multiplexer.value.createStreamChannel(promise: promise, initialize)
            }
            promise.futureResult.whenComplete { result in
                switch result {
                case .success(let stream):
                    stream.closeFuture.whenComplete { _ in callbacks?.streamEnded() }
                case .failure:
                    callbacks?.streamEnded()
                }
            }
            return promise.futureResult
        }
    }

    /// Closes the connection: running streams fail with ``EngineError/shutDown``.
    func close() {
        eventLoop.execute {
            let streams = self.state.withLock { Array($0.openStreams.values) }
            for (stream, _) in streams {
                stream.close()
            }
            // After the streams' own closes (queued above), so their requests see shutDown.
            let channel = self.channel
            channel.eventLoop.execute { channel.close(promise: nil) }
        }
    }

    /// Marks the connection idle (no stream open) now; returns whether the caller must arm
    /// the idle timer (one timer at a time, re-armed only when it fires).
    func markIdle() -> Bool {
        state.withLock { $0.idle.markIdle() }
    }

    /// The idle timer fired: returns when the connection became idle, or nil if it is busy.
    func idleTimerFired() -> NIODeadline? {
        state.withLock { $0.idle.timerFired() }
    }
}
