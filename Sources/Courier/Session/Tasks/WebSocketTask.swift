public import Foundation
import Synchronization

/// A WebSocket run by a session manager: `URLSessionWebSocketTask`'s shape, on Courier's
/// engine (RFC 6455, RFC 7692 compression). When the manager already has an HTTP/2 connection
/// to the origin and its server allows it, the socket is a stream of that connection (RFC
/// 8441) instead of a connection of its own (``WebSocketConfiguration/allowsHTTP2``).
///
/// ``SessionTask/resume()`` opens it: the handshake goes through the manager's headers, cookie jar,
/// interceptor, proxy, TLS settings and security policy (pinning included), and answers a
/// 401 once with the session's credential or the challenge block. Its ``SessionTask/response`` is then
/// the `101` (over HTTP/2, the `200`), its ``SessionTask/metrics`` the opening's timings. Like every task it is in the manager's
/// `tasks` while it runs, posts the resume and completion notifications and reaches the event
/// monitors; it completes when the socket closes: without an error after a close with 1000,
/// 1001 or no code, with ``CourierError/webSocketFailed(url:error:)`` otherwise.
///
/// ```swift
/// let socket = manager.webSocketTask(with: URL(string: "wss://example.com/chat")!)
/// socket.resume()
/// try await socket.send(.string("hello"))
/// for try await message in socket.messages {
///     print(message)
/// }
/// ```
public final class WebSocketTask: SessionTask, @unchecked Sendable {
    /// One whole message.
    public enum Message: Sendable, Equatable {
        /// A text message.
        case string(String)
        /// A binary message.
        case data(Data)
    }

    /// The runner, kept after the task completed (the delegate box is emptied then), so calls
    /// made later still get a typed error and the close code.
    let runnerStore = Mutex<WebSocketTaskRunner?>(nil)
    var runner: WebSocketTaskRunner? { runnerStore.withLock { $0 } }

    /// Sends `message`; returns once it is written to the socket. Waits for the handshake when
    /// the task is still opening.
    /// - Throws: ``CourierError`` (the handshake failed, the socket is closed, the task was not resumed).
    public func send(_ message: Message) async throws {
        try await requireRunner().send(message)
    }

    /// The next whole message (its fragments joined, inflated when compressed).
    /// - Throws: ``CourierError/webSocketFailed(url:error:)`` once the socket closed (with
    ///   `WebSocketError/closed(code:reason:)` after a normal close). Cancelling the calling
    ///   Swift task closes the socket with 1001 (going away) and throws ``CourierError/cancelled(url:)``.
    public func receive() async throws -> Message {
        try await requireRunner().receive()
    }

    /// Every message as it arrives; ends after a normal close (1000, 1001, or no code), throws
    /// after any other end. Ending the loop early (a `break`, or the iterating task cancelled)
    /// closes the socket with 1001.
    public var messages: AsyncThrowingStream<Message, any Error> {
        guard let runner else {
            return AsyncThrowingStream { $0.finish(throwing: CourierError.cancelled(url: originalRequest?.url)) }
        }
        return runner.messages()
    }

    /// Sends a ping; returns the round trip once its pong arrives.
    /// - Throws: ``CourierError/webSocketFailed(url:error:)`` with `WebSocketError/pongTimedOut(seconds:)`
    ///   when no pong came within ``WebSocketConfiguration/pongTimeout`` (the connection is then dropped).
    public func sendPing() async throws -> Duration {
        try await requireRunner().sendPing()
    }

    /// Closes the socket with `closeCode` and `reason` (the close handshake, bounded by
    /// ``WebSocketConfiguration/closeTimeout``), then the task completes. Before the socket
    /// opened, the handshake is abandoned and the task completes cancelled.
    public func cancel(with closeCode: WebSocketCloseCode, reason: Data?) {
        runner?.cancel(with: closeCode.rawValue, reason: reason)
    }

    /// How the socket closed: `WebSocketCloseCode/invalid` until it did. A code with no case
    /// (3000–4999) reads as `WebSocketCloseCode/invalid` here; ``closeCodeValue`` has the number.
    public var closeCode: WebSocketCloseCode { WebSocketCloseCode(rawValue: closeCodeValue) ?? .invalid }
    /// The close code as a number (0 until the socket closed).
    public var closeCodeValue: Int { runner?.closeStatus.code ?? 0 }
    /// The close reason the socket ended with, if any.
    public var closeReason: Data? { runner?.closeStatus.reason }
    /// The largest message accepted (fragments joined, after inflation); a larger one closes
    /// the socket with 1009. 1 MiB by default, as URLSession's. Set it before ``SessionTask/resume()``.
    public var maximumMessageSize: Int {
        get { runner?.maximumMessageSize ?? 1 << 20 }
        set { runner?.maximumMessageSize = newValue }
    }
    /// The subprotocol the server chose from those offered (`Sec-WebSocket-Protocol`), once open.
    public var negotiatedProtocol: String? { runner?.connection?.negotiatedProtocol }
    /// Whether RFC 7692 permessage-deflate was negotiated.
    public var usesPerMessageDeflate: Bool { runner?.connection?.perMessageDeflate != nil }

    private func requireRunner() throws -> WebSocketTaskRunner {
        guard let runner else { throw CourierError.cancelled(url: originalRequest?.url) }
        return runner
    }
}
