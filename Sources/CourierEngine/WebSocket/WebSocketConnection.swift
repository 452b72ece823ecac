import NIOCore
public import NIOHTTP1

/// An open WebSocket: send and receive whole messages, ping, close. Thread-safe; every call
/// hops to the connection's event loop.
///
/// ```swift
/// let engine = try HTTPEngine()
/// guard case .opened(let socket) = try await engine.openWebSocket(EngineRequest(url: URL(string: "ws://127.0.0.1:8080/ws/echo")!)) else { return }
/// try await socket.send(.text("hello"))
/// print(try await socket.receive() ?? .text("closed"))
/// await socket.close()
/// ```
public final class WebSocketConnection: Sendable {
    /// The handshake request as it was sent (the request's fields and the handshake's own).
    public let requestHead: HTTPRequestHead
    /// The server's `101 Switching Protocols`, or its `200` when the socket is an HTTP/2
    /// stream (RFC 8441; ``metrics`` then names `h2`).
    public let responseHead: HTTPResponseHead
    /// The subprotocol the server chose from those offered, if any.
    public let negotiatedProtocol: String?
    /// The permessage-deflate parameters, when the server agreed to compress.
    public let perMessageDeflate: PerMessageDeflate?
    /// The opening's timings: name lookup, connect, TLS, and the handshake (request start to
    /// the answer's arrival, `requestStart`…`responseStart`).
    public let metrics: EngineMetrics

    private let channel: any Channel
    private let inbox: WebSocketInbox

    init(
        channel: any Channel, inbox: WebSocketInbox, requestHead: HTTPRequestHead, responseHead: HTTPResponseHead,
        agreement: WebSocketHandshake.Agreement, metrics: EngineMetrics
    ) {
        self.channel = channel
        self.requestHead = requestHead
        self.inbox = inbox
        self.responseHead = responseHead
        self.negotiatedProtocol = agreement.subprotocol
        self.perMessageDeflate = agreement.deflate
        self.metrics = metrics
    }

    /// Sends `message` as one frame (compressed when permessage-deflate is on). Returns once
    /// it is written to the socket. Throws ``WebSocketError/closed(code:reason:)`` after the
    /// socket closed or began closing.
    public func send(_ message: WebSocketMessage) async throws {
        try await onHandler(Void.self) { handler, promise in handler.send(message, promise: promise) }
    }

    /// The next whole message; nil after a close that is not a failure (1000, 1001, or no
    /// code). Throws the ``WebSocketError`` that ended the socket otherwise (a protocol
    /// violation, a server close with another code, a lost connection), and
    /// `CancellationError` when the calling task is cancelled while it waits (the socket
    /// stays open).
    public func receive() async throws -> WebSocketMessage? {
        try await inbox.next()
    }

    /// Sends a ping and returns the round trip once its pong arrives. Without a pong within
    /// the pong timeout the connection is dropped and this throws
    /// ``WebSocketError/pongTimedOut(seconds:)``.
    public func ping() async throws -> Duration {
        try await onHandler(Duration.self) { handler, promise in handler.ping(promise: promise) }
    }

    /// Closes the socket: sends a close frame with `code` and `reason` (cut to 123 bytes), waits
    /// (bounded by the close timeout) for the server's, then closes the connection. Returns
    /// when the connection is closed; calling it again, or after the server closed, just waits
    /// for that.
    public func close(code: Int = 1000, reason: String = "") async {
        try? await onHandler(Void.self) { handler, promise in handler.close(code: code, reason: reason, promise: promise) }
    }

    /// How the socket closed (its code and reason), once it did; nil while it is open.
    public var closeStatus: (code: Int, reason: String)? {
        inbox.ending.map { ($0.code, $0.reason) }
    }

    /// The error that ended the socket, when it ended in failure.
    public var failure: WebSocketError? { inbox.ending?.error }

    /// Runs `body` with the socket's handler on its event loop; fails as closed when the
    /// handler is gone.
    private func onHandler<Value: Sendable>(
        _ type: Value.Type, _ body: @escaping @Sendable (WebSocketChannelHandler, EventLoopPromise<Value>) -> Void
    ) async throws -> Value {
        let channel = self.channel
        let inbox = self.inbox
        return try await channel.eventLoop.flatSubmit { () -> EventLoopFuture<Value> in
            let promise = channel.eventLoop.makePromise(of: Value.self)
            if let handler = try? channel.pipeline.syncOperations.handler(type: WebSocketChannelHandler.self) {
                body(handler, promise)
            } else {
                let ending = inbox.ending ?? .init(code: 1006, reason: "", error: nil)
                promise.fail(WebSocketError.closed(code: ending.code, reason: ending.reason))
            }
            return promise.futureResult
        }.get()
    }
}

extension WebSocketConnection {
    /// How a socket ended: its close code and reason, and the error when it ended in failure.
    public struct Ending: Sendable, Equatable {
        /// The close code (1005 when the server's close frame had none, 1006 when there was no close frame).
        public var code: Int
        /// The close reason (empty when none).
        public var reason: String
        /// The failure, or nil for a close that is not one (1000, 1001, or none).
        public var error: WebSocketError?
    }

    /// Waits until the connection is closed, and says how the socket ended.
    public func ended() async -> Ending {
        try? await channel.closeFuture.get()
        let ending = inbox.ending ?? .init(code: 1006, reason: "", error: .connectionLost("the connection closed"))
        return Ending(code: ending.code, reason: ending.reason, error: ending.error)
    }
}
