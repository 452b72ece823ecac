import Foundation
import NIOCore
import NIOHTTP1
import NIOWebSocket
import Testing

@testable import CourierEngine

/// The pure rules behind the socket: the handshake's checks, permessage-deflate's negotiation
/// and bounded inflation, and the frame state machine, without any I/O.
@Suite("WebSocket rules")
struct WebSocketRulesTests {
    // MARK: Handshake

    @Test func theAcceptValueIsRFC6455sExample() {
        // RFC 6455 §1.3's worked example.
        #expect(WebSocketHandshake.accept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    private func response(_ fields: [(String, String)], status: HTTPResponseStatus = .switchingProtocols) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(fields))
    }

    @Test func aCompleteAnswerIsAccepted() throws {
        let handshake = WebSocketHandshake(protocols: ["chat"], offersDeflate: true, key: "dGhlIHNhbXBsZSBub25jZQ==")
        let agreement = try handshake.agreement(
            with: response([
                ("Upgrade", "WebSocket"), ("Connection", "keep-alive, Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
                ("Sec-WebSocket-Protocol", "chat"), ("Sec-WebSocket-Extensions", "permessage-deflate; server_no_context_takeover"),
            ]))
        #expect(agreement.subprotocol == "chat")
        #expect(agreement.deflate?.serverNoContextTakeover == true)
    }

    @Test(arguments: [
        [("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")],  // no Upgrade
        [("Upgrade", "websocket"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")],  // no Connection
        [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "wrong")],
        [("Upgrade", "websocket"), ("Connection", "Upgrade")],  // no accept
        [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), ("Sec-WebSocket-Protocol", "other")],
        [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), ("Sec-WebSocket-Extensions", "x-webkit-deflate-frame")],
    ])
    func anIncompleteAnswerFailsTheHandshake(fields: [(String, String)]) {
        let handshake = WebSocketHandshake(protocols: ["chat"], offersDeflate: true, key: "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(throws: WebSocketError.self) { try handshake.agreement(with: response(fields)) }
    }

    @Test func aSubprotocolThatIsNotATokenIsRefusedBeforeSending() {
        let handshake = WebSocketHandshake(protocols: ["chat v1"], offersDeflate: false)
        #expect(throws: WebSocketError.self) {
            var headers = HTTPHeaders()
            try handshake.apply(to: &headers)
        }
    }

    // MARK: permessage-deflate

    @Test(arguments: [
        "permessage-deflate; client_max_window_bits=7", "permessage-deflate; server_max_window_bits=16",
        "permessage-deflate; server_max_window_bits", "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
        "permessage-deflate; unknown_parameter", "permessage-deflate; client_no_context_takeover=1", "permessage-deflate, permessage-deflate",
        "permessage-deflate;", "other-extension",
    ])
    func invalidDeflateAnswersAreRefused(answer: String) {
        #expect(throws: PerMessageDeflate.NegotiationError.self) { try PerMessageDeflate.negotiated(from: [answer], offered: true) }
    }

    @Test func anExtensionAnswerWithoutAnOfferIsRefused() throws {
        #expect(throws: PerMessageDeflate.NegotiationError.self) { try PerMessageDeflate.negotiated(from: ["permessage-deflate"], offered: false) }
        #expect(try PerMessageDeflate.negotiated(from: [], offered: false) == nil)
    }

    @Test func quotedWindowBitsAreRead() throws {
        let parameters = try #require(try PerMessageDeflate.negotiated(from: ["permessage-deflate; client_max_window_bits=\"10\""], offered: true))
        #expect(parameters.clientMaxWindowBits == 10)
    }

    @Test func inflationStopsAtTheLimit() throws {
        var parameters = PerMessageDeflate()
        parameters.serverNoContextTakeover = true
        let sender = try PerMessageDeflateCodec(parameters: parameters)
        let receiver = try PerMessageDeflateCodec(parameters: parameters)
        let allocator = ByteBufferAllocator()
        let zeros = ByteBuffer(repeating: 0, count: 8 << 20)
        let bomb = try #require(try sender.compress(zeros, allocator: allocator))
        #expect(bomb.readableBytes < 64 << 10)
        #expect(throws: PerMessageDeflateCodec.InflateError.tooBig) { try receiver.decompress(bomb, limit: 1 << 20, allocator: allocator) }
        let small = try #require(try sender.compress(ByteBuffer(string: "hello hello hello"), allocator: allocator))
        #expect(try receiver.decompress(small, limit: 1 << 20, allocator: allocator) == ByteBuffer(string: "hello hello hello"))
        #expect(throws: PerMessageDeflateCodec.InflateError.corrupt) {
            try receiver.decompress(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0x01]), limit: 1 << 20, allocator: allocator)
        }
    }

    // MARK: Frames

    private func frame(_ opcode: WebSocketOpcode, _ text: String = "", fin: Bool = true, rsv1: Bool = false) -> WebSocketFrame {
        WebSocketFrame(fin: fin, rsv1: rsv1, opcode: opcode, data: ByteBuffer(string: text))
    }

    @Test func fragmentsAreJoinedAndControlFramesMayInterleave() {
        var machine = WebSocketStateMachine(maximumMessageSize: 100, compressionNegotiated: false)
        #expect(machine.receive(frame(.text, "ab", fin: false)) == .none)
        #expect(machine.receive(frame(.ping, "p")) == .sendPong(ByteBuffer(string: "p")))
        #expect(machine.receive(frame(.continuation, "cd")) == .message(isText: true, compressed: false, payload: ByteBuffer(string: "abcd")))
    }

    @Test func rsv1MarksACompressedMessageOnlyWhenNegotiatedAndOnlyOnItsFirstFrame() {
        var negotiated = WebSocketStateMachine(maximumMessageSize: 100, compressionNegotiated: true)
        #expect(negotiated.receive(frame(.text, "x", fin: false, rsv1: true)) == .none)
        guard case .fail(.protocolError, _) = negotiated.receive(frame(.continuation, "y", rsv1: true)) else {
            Issue.record("RSV1 on a continuation was accepted")
            return
        }
        var plain = WebSocketStateMachine(maximumMessageSize: 100, compressionNegotiated: false)
        guard case .fail(.protocolError, _) = plain.receive(frame(.text, "x", rsv1: true)) else {
            Issue.record("RSV1 without permessage-deflate was accepted")
            return
        }
    }

    @Test func aMessageGrowingPastTheLimitAcrossFragmentsFails() {
        var machine = WebSocketStateMachine(maximumMessageSize: 5, compressionNegotiated: false)
        #expect(machine.receive(frame(.binary, "abc", fin: false)) == .none)
        guard case .fail(.messageTooBig, _) = machine.receive(frame(.continuation, "def")) else {
            Issue.record("a message past the limit was accepted")
            return
        }
    }

    @Test func afterCourierStartedClosingMessagesStillArriveUntilTheServersClose() {
        var machine = WebSocketStateMachine(maximumMessageSize: 100, compressionNegotiated: false)
        let started = machine.closeSent()
        #expect(started)
        #expect(machine.receive(frame(.text, "late")) == .message(isText: true, compressed: false, payload: ByteBuffer(string: "late")))
        #expect(machine.receive(frame(.ping, "p")) == .none)
        var close = ByteBuffer()
        close.writeInteger(UInt16(1000))
        #expect(machine.receive(WebSocketFrame(fin: true, opcode: .connectionClose, data: close)) == .closeAcknowledged(code: 1000, reason: ""))
        #expect(machine.state == .closed)
        #expect(machine.receive(frame(.text, "after")) == .none)
    }

    @Test func closeCodesAPeerMaySend() {
        for code in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4999] {
            #expect(WebSocketCloseCode.maySend(code), "\(code)")
        }
        for code in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
            #expect(!WebSocketCloseCode.maySend(code), "\(code)")
        }
    }

    @Test func aCloseReasonIsCutToFitAControlFrameOnACharacterBoundary() {
        let payload = WebSocketChannelHandler.closePayload(code: 1000, reason: String(repeating: "é", count: 100), allocator: ByteBufferAllocator())
        #expect(payload.readableBytes <= 125)
        #expect(String(validating: payload.readableBytesView.dropFirst(2), as: UTF8.self) != nil)
    }
}
