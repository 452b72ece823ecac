import NIOCore
import NIOWebSocket

/// The client side of RFC 6455 after the handshake, as a value: what each frame from the
/// server means, what to answer, and when the socket is closed. No I/O: the channel handler
/// feeds it frames and carries out what it returns.
///
/// The rules it enforces (each answered with the RFC's close code):
/// - a server frame must not be masked (§5.1), reserved bits are 0 unless an extension
///   negotiated them (RSV1 for a compressed message's first frame, §5.2, RFC 7692 §6), and
///   opcodes 3–7 and 11–15 are reserved: 1002;
/// - control frames carry at most 125 bytes and are never fragmented (§5.5): 1002 (NIO's
///   frame decoder enforces this as it parses);
/// - a continuation frame needs a message in progress, and a new data frame needs none: 1002;
/// - a message (fragments joined, after inflation) larger than `maximumMessageSize`: 1009;
/// - a text message that is not UTF-8 (§8.1), or a close reason that is not: 1007;
/// - a close frame with a 1-byte payload, or a code a peer may not send: 1002.
///
/// Pings are answered with their payload (§5.5.2) while the socket is open. After Courier sent
/// its close, the server's messages still arrive until its close does (§5.5.1 only stops the
/// sender); after the server's close, nothing more is read.
struct WebSocketStateMachine {
    enum State: Equatable {
        case open
        /// Courier sent a close frame; waiting for the server's.
        case closeSent
        /// Both close frames were exchanged (or the connection failed): nothing more to do.
        case closed
    }

    /// A data message being received, its fragments joined.
    struct PartialMessage {
        var isText: Bool
        var compressed: Bool
        var payload: ByteBuffer
    }

    /// What the handler does with a frame.
    enum Action: Equatable {
        case none
        /// A whole message: `payload` is compressed (RFC 7692) when `compressed`; the handler
        /// inflates it (bounded) and calls ``messageInflated(isText:payload:)`` , or delivers it
        /// through that call at once when it is not compressed.
        case message(isText: Bool, compressed: Bool, payload: ByteBuffer)
        /// Answer a ping with a pong carrying `payload`.
        case sendPong(ByteBuffer)
        /// The server's pong (matches a ping by its payload).
        case pongReceived(ByteBuffer)
        /// The server started the close handshake: send a close frame back with `code` (its
        /// code echoed, RFC 6455 §5.5.1), then close the connection.
        case echoClose(code: Int?, reason: String)
        /// The server answered Courier's close: close the connection.
        case closeAcknowledged(code: Int?, reason: String)
        /// The server broke the protocol: send a close frame with `code` and close.
        case fail(code: WebSocketCloseCode, reason: String)
    }

    private(set) var state: State = .open
    private var partial: PartialMessage?
    let maximumMessageSize: Int
    /// Whether permessage-deflate was negotiated (RSV1 then marks a compressed message).
    let compressionNegotiated: Bool

    init(maximumMessageSize: Int, compressionNegotiated: Bool) {
        self.maximumMessageSize = maximumMessageSize
        self.compressionNegotiated = compressionNegotiated
    }

    /// Courier starts the close handshake. False when it was already started or is over.
    mutating func closeSent() -> Bool {
        guard state == .open else { return false }
        state = .closeSent
        return true
    }

    /// The connection failed or is gone.
    mutating func closed() {
        state = .closed
        partial = nil
    }

    /// What `frame`, from the server, means.
    mutating func receive(_ frame: WebSocketFrame) -> Action {
        guard state != .closed else { return .none }
        if frame.maskKey != nil {
            return fail(.protocolError, "the server masked a frame (RFC 6455 §5.1)")
        }
        if frame.rsv2 || frame.rsv3 {
            return fail(.protocolError, "the server set a reserved bit no extension negotiated (RSV2/RSV3)")
        }
        if frame.rsv1 && (!compressionNegotiated || frame.opcode == .continuation || frame.opcode.isControlOpcode) {
            return fail(.protocolError, compressionNegotiated
                ? "the server set RSV1 on a frame that does not start a data message"
                : "the server set RSV1 but permessage-deflate was not negotiated")
        }
        switch frame.opcode {
        case .text, .binary:
            return dataFrame(frame, isText: frame.opcode == .text)
        case .continuation:
            return continuation(frame)
        case .ping:
            guard state == .open else { return .none }
            return .sendPong(frame.data)
        case .pong:
            return .pongReceived(frame.data)
        case .connectionClose:
            return closeFrame(frame)
        default:
            return fail(.protocolError, "the server sent a frame with the reserved opcode \(frame.opcode)")
        }
    }

    /// Checks a whole message's payload once it is inflated (or at once when it was not
    /// compressed): its size, and UTF-8 for text. The delivered message, or the failure.
    mutating func messageInflated(isText: Bool, payload: ByteBuffer) -> Result<WebSocketMessage, Failure> {
        if payload.readableBytes > maximumMessageSize {
            return .failure(failure(.messageTooBig, "a message is larger than \(maximumMessageSize) bytes"))
        }
        guard isText else { return .success(.binary(payload)) }
        guard let text = String(validating: payload.readableBytesView, as: UTF8.self) else {
            return .failure(failure(.invalidFramePayloadData, "a text message is not valid UTF-8"))
        }
        return .success(.text(text))
    }

    /// A protocol failure and what to do about it.
    struct Failure: Error, Equatable {
        let code: WebSocketCloseCode
        let reason: String
    }

    /// Inflation failed: the payload is not a deflate stream, or it inflates past the limit.
    mutating func inflationFailed(tooBig: Bool) -> Failure {
        tooBig
            ? failure(.messageTooBig, "a compressed message inflates past \(maximumMessageSize) bytes")
            : failure(.invalidFramePayloadData, "a compressed message does not inflate (not a deflate stream)")
    }

    // MARK: - Frames

    private mutating func dataFrame(_ frame: WebSocketFrame, isText: Bool) -> Action {
        if partial != nil {
            return fail(.protocolError, "the server started a new message before finishing the previous one")
        }
        let message = PartialMessage(isText: isText, compressed: frame.rsv1, payload: frame.data)
        return append(message, fin: frame.fin)
    }

    private mutating func continuation(_ frame: WebSocketFrame) -> Action {
        guard var message = partial else {
            return fail(.protocolError, "the server sent a continuation frame with no message in progress")
        }
        partial = nil
        var data = frame.data
        message.payload.writeBuffer(&data)
        return append(message, fin: frame.fin)
    }

    private mutating func append(_ message: PartialMessage, fin: Bool) -> Action {
        if message.payload.readableBytes > maximumMessageSize {
            return fail(.messageTooBig, "a message is larger than \(maximumMessageSize) bytes")
        }
        guard fin else {
            partial = message
            return .none
        }
        return .message(isText: message.isText, compressed: message.compressed, payload: message.payload)
    }

    private mutating func closeFrame(_ frame: WebSocketFrame) -> Action {
        var payload = frame.data
        var code: Int?
        var reason = ""
        switch payload.readableBytes {
        case 0:
            break
        case 1:
            return fail(.protocolError, "the server's close frame has a 1-byte payload")
        default:
            guard let raw = payload.readInteger(as: UInt16.self) else { return fail(.protocolError, "unreadable close code") }
            guard WebSocketCloseCode.maySend(Int(raw)) else {
                return fail(.protocolError, "the server closed with \(raw), a code no endpoint may send")
            }
            code = Int(raw)
            guard let text = String(validating: payload.readableBytesView, as: UTF8.self) else {
                return fail(.invalidFramePayloadData, "the server's close reason is not valid UTF-8")
            }
            reason = text
        }
        let wasOpen = state == .open
        state = .closed
        partial = nil
        return wasOpen ? .echoClose(code: code, reason: reason) : .closeAcknowledged(code: code, reason: reason)
    }

    private mutating func failure(_ code: WebSocketCloseCode, _ reason: String) -> Failure {
        state = .closed
        partial = nil
        return Failure(code: code, reason: reason)
    }

    private mutating func fail(_ code: WebSocketCloseCode, _ reason: String) -> Action {
        let failure = failure(code, reason)
        return .fail(code: failure.code, reason: failure.reason)
    }
}
