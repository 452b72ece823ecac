import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Synchronization

extension HTTPEngine {
    /// Opens the socket as an RFC 8441 extended-CONNECT stream on `connection`, whose stream
    /// the pool leased for it. Returns nil when the stream ended before the server answered
    /// (it went away, or reset the stream): the caller then opens an HTTP/1.1 connection.
    func openWebSocketStream(
        on connection: HTTP2Connection, head: HTTPRequestHead, handshake: WebSocketHandshake, scheme: String,
        options: WebSocketOptions, deadline: NIODeadline, fetchStart: Date
    ) async throws -> WebSocketOpening? {
        let headers = try handshake.extendedConnectHeaders(for: head, scheme: scheme)
        let stream = Mutex<(any Channel)?>(nil)
        let inbox = WebSocketInbox {
            guard let channel = stream.withLock({ $0 }) else { return }
            channel.eventLoop.execute {
                (try? channel.pipeline.syncOperations.handler(type: WebSocketChannelHandler.self))?.resumeReading()
            }
        }
        let loop = connection.eventLoop
        let promise = loop.makePromise(of: WebSocketHandshakeHandler.Outcome.self)
        let opened = connection.openStream { channel in
            channel.eventLoop.makeCompletedFuture {
                stream.withLock { $0 = channel }
                let handler = WebSocketStreamHandshakeHandler(headers: headers, handshake: handshake, promise: promise) { agreement in
                    [
                        HTTP2StreamBytesHandler(),
                        ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: options.maximumMessageSize)),
                        WebSocketFrameEncoder(),
                        try WebSocketChannelHandler(options: options, deflate: agreement.deflate, inbox: inbox),
                    ]
                }
                try channel.pipeline.syncOperations.addHandler(handler)
                let timeout = channel.eventLoop.scheduleTask(deadline: deadline) {
                    promise.fail(EngineError.timedOut(.idle))
                    channel.close(promise: nil)
                }
                promise.futureResult.whenComplete { _ in timeout.cancel() }
            }
        }
        opened.whenFailure { promise.fail($0) }
        let outcome: WebSocketHandshakeHandler.Outcome
        do {
            outcome = try await promise.futureResult.get()
        } catch is WebSocketStreamHandshakeHandler.Unanswered {
            return nil
        } catch {
            if (try? await opened.get()) == nil { return nil }
            throw error
        }
        var metrics = EngineMetrics(fetchStart: fetchStart)
        metrics.record(connection.info, includingSetup: false)
        metrics.isReusedConnection = true
        metrics.networkProtocolName = "h2"
        switch outcome {
        case .upgraded(let response, let agreement, let requestStart):
            metrics.requestStart = Date(timeIntervalSinceNow: -Double((NIODeadline.now() - requestStart).nanoseconds) / 1e9)
            metrics.responseStart = Date()
            metrics.responseEnd = metrics.responseStart
            guard let channel = stream.withLock({ $0 }) else {
                throw EngineError.connectionLost("the WebSocket stream closed as it opened")
            }
            return .opened(
                WebSocketConnection(
                    channel: channel, inbox: inbox, requestHead: head, responseHead: response, agreement: agreement, metrics: metrics))
        case .refused(let response, let body):
            metrics.responseEnd = Date()
            metrics.responseBodyBytesReceived = Int64(body.readableBytes)
            return .refused(head: response, body: body, metrics: metrics)
        }
    }
}
