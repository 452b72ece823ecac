import NIOCore
import NIOHTTP2

/// Watches an HTTP/2 connection's control frames after `NIOHTTP2Handler`, whose inline stream
/// multiplexer hands streams' frames to their stream channels and passes on only the
/// connection's own (stream 0): the server's first SETTINGS makes the connection ready, later
/// ones change `SETTINGS_MAX_CONCURRENT_STREAMS` (and `SETTINGS_ENABLE_CONNECT_PROTOCOL` says
/// whether WebSockets may open as streams), `GOAWAY` stops new streams, and the channel's
/// end is reported once. Everything passes through.
///
/// Event-loop confined; the callbacks are set before the first request and run on the loop.
final class HTTP2ConnectionObserver: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    /// Streams assumed when the server's SETTINGS don't limit them (RFC 9113 leaves it
    /// unlimited; 100 is the recommended minimum and what most servers send).
    static let defaultMaximumStreams = 100

    /// The setup handler, told when the first SETTINGS arrives or setup fails.
    weak var setup: ConnectionSetupHandler?
    let host: String
    /// The server's current `SETTINGS_MAX_CONCURRENT_STREAMS` (nil before its first SETTINGS).
    private(set) var maximumStreams: Int?
    /// Whether the server sent `GOAWAY`.
    private(set) var goingAway = false
    /// The lowest last-stream id of the server's `GOAWAY`s: streams above it were not processed.
    private(set) var goAwayLastStreamID: HTTP2StreamID?
    private(set) var isClosed = false
    /// An upper bound on streams from the configuration (the server's value is used when lower).
    let streamCap: Int
    /// Whether the server allows extended CONNECT (RFC 8441), from its SETTINGS.
    let extendedConnect = HTTP2ExtendedConnectSupport()

    var onSettingsChanged: ((Int) -> Void)?
    var onGoAway: (() -> Void)?
    var onClosed: (() -> Void)?
    /// A connection-level error after setup (NIOHTTP2 has sent GOAWAY but keeps the channel
    /// open): every stream fails with it and the connection closes.
    var onConnectionError: ((EngineError) -> Void)?

    /// The server's current `SETTINGS_INITIAL_WINDOW_SIZE`: each stream's send window starts there.
    private(set) var peerInitialWindowSize = HTTP2SendWindow.defaultInitialSize
    /// An HTTP/2 error NIOHTTP2 raised on this side in the current read, not yet attributed:
    /// a stream error if a stream it reset claims it (``claimViolation(resetWith:)``), else a
    /// connection error once the loop comes round.
    private var pendingViolation: HTTP2ProtocolViolation?

    init(host: String, streamCap: Int) {
        self.host = host
        self.streamCap = max(1, streamCap)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if frame.streamID == .rootStream {
            switch frame.payload {
            case .settings(.settings(let settings)):
                if let window = settings.last(where: { $0.parameter == .initialWindowSize }) {
                    peerInitialWindowSize = window.value
                }
                if let connect = settings.last(where: { $0.parameter == .enableConnectProtocol }) {
                    extendedConnect.record(connect.value)
                }
                let announced = settings.last(where: { $0.parameter == .maxConcurrentStreams }).map { Int($0.value) }
                if maximumStreams == nil {
                    maximumStreams = min(streamCap, announced ?? Self.defaultMaximumStreams)
                    setup?.markReady()
                } else if let announced {
                    maximumStreams = min(streamCap, announced)
                    onSettingsChanged?(min(streamCap, announced))
                }
            case .goAway(let lastStreamID, _, _):
                goAwayLastStreamID = min(lastStreamID, goAwayLastStreamID ?? lastStreamID)
                if !goingAway {
                    goingAway = true
                    if maximumStreams == nil {
                        setup?.setupFailed(.connectionLost("the server sent GOAWAY before its SETTINGS"))
                    }
                    onGoAway?()
                }
            default:
                break
            }
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if pendingViolation != nil {
            // The first violation of this read is the one reported; what NIOHTTP2 raises after
            // it (frames that no longer parse once it stopped) follows from it.
            context.fireErrorCaught(error)
            return
        }
        if maximumStreams != nil, onConnectionError != nil, error is any NIOHTTP2Error {
            // NIOHTTP2 raises a stream error here first, then closes that stream (reset with the
            // error's code) in the same read: wait for the loop to come round to tell which.
            pendingViolation = EngineErrorMapping.violation(error, scope: .connection)
            context.eventLoop.assumeIsolated().execute {
                self.settlePendingViolation(context: context)
            }
            context.fireErrorCaught(error)
            return
        }
        failConnection(context: context, with: EngineErrorMapping.map(error, host: host))
        context.fireErrorCaught(error)
    }

    /// Called by a stream NIOHTTP2 closed with `code`: the violation Courier detected in this
    /// read, which is why the stream was reset (by Courier, not the server), or nil.
    ///
    /// A stream closed with `CANCEL` was closed with all the others over a connection error;
    /// any other code is the reset of that one stream (the violation is then its alone).
    func claimViolation(resetWith code: HTTP2ErrorCode) -> HTTP2ProtocolViolation? {
        guard var violation = pendingViolation else { return nil }
        if code == .cancel {
            violation.scope = .connection
        } else {
            pendingViolation = nil
            violation.scope = .stream
            violation.errorCode = EngineErrorMapping.codeName(code)
        }
        return violation
    }

    /// An error no stream claimed as its reset: the connection's (NIOHTTP2 sent `GOAWAY`).
    private func settlePendingViolation(context: ChannelHandlerContext) {
        guard let violation = pendingViolation else { return }
        pendingViolation = nil
        failConnection(context: context, with: .http2ProtocolViolation(violation))
    }

    private func failConnection(context: ChannelHandlerContext, with mapped: EngineError) {
        if maximumStreams == nil {
            setup?.setupFailed(mapped)
        } else if let onConnectionError {
            self.onConnectionError = nil
            // No new stream goes here: the pool opens another connection for what waits.
            if !goingAway {
                goingAway = true
                onGoAway?()
            }
            onConnectionError(mapped)
        } else {
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isClosed {
            isClosed = true
            let onClosed = self.onClosed
            self.onClosed = nil
            onClosed?()
        }
        context.fireChannelInactive()
    }
}
