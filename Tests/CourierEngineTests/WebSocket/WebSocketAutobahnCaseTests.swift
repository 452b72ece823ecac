import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// The cases of the Autobahn test suite's sections 1–7, 9 and 12–13, as frames the test
/// server sends exactly as built here (`/ws/raw`), or as echoes of what the client sends.
/// Each names its Autobahn case.
@Suite("WebSocket: Autobahn cases")
struct WebSocketAutobahnCaseTests {
    /// Opens `/ws/raw` with `frames` sent right after the handshake (no compression offered).
    private func raw(_ engine: HTTPEngine, _ server: TestServer, _ frames: [UInt8]) async throws -> WebSocketConnection {
        var options = WebSocketOptions()
        options.perMessageDeflate = false
        return try await openSocket(engine, server, "/ws/raw?frames=\(ServerFrame.base64URL(frames))", options: options)
    }

    // MARK: 1: framing

    @Test("1.1.1-1.2.8: text and binary payloads of 0, 125, 126, 127, 128, 65535, 65536 bytes", arguments: [0, 125, 126, 127, 128, 65_535, 65_536])
    func payloadLengths(length: Int) async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.perMessageDeflate = false
            let socket = try await openSocket(engine, server, "/ws/echo", options: options)
            let text = String(repeating: "*", count: length)
            try await socket.send(.text(text))
            #expect(try await socket.receive() == .text(text))
            let bytes = ByteBuffer(repeating: 0xFE, count: length)
            try await socket.send(.binary(bytes))
            #expect(try await socket.receive() == .binary(bytes))
            await socket.close()
        }
    }

    // MARK: 2: pings and pongs

    @Test("2.1, 2.3, 2.4: pings with no payload, a binary payload, 125 bytes are answered with the same payload")
    func pingsAreAnswered() async throws {
        try await withEngine { engine, server in
            let payloads: [[UInt8]] = [[], [0x00, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0x00, 0xFF], Array(repeating: 0xFE, count: 125)]
            let socket = try await raw(engine, server, payloads.flatMap { ServerFrame.bytes(.ping, $0) })
            #expect(await eventually(within: 10) { server.webSocketPongsReceived.count == 3 })
            #expect(server.webSocketPongsReceived == payloads)
            await socket.close()
        }
    }

    @Test("2.5: a ping with 126 bytes is a protocol error")
    func aLongPingIsAProtocolError() async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.ping, Array(repeating: 0xFE, count: 126)))
            #expect(await receiveFailure(socket)?.violationCode == .protocolError)
        }
    }

    @Test("2.6, 2.7: an unsolicited pong is ignored; messages after it arrive")
    func anUnsolicitedPongIsIgnored() async throws {
        try await withEngine { engine, server in
            let frames = ServerFrame.bytes(.pong, Array("unsolicited".utf8)) + ServerFrame.bytes(.text, Array("after".utf8))
            let socket = try await raw(engine, server, frames)
            #expect(try await socket.receive() == .text("after"))
            await socket.close()
        }
    }

    @Test("2.10: ten pings in a row get ten pongs")
    func tenPings() async throws {
        try await withEngine { engine, server in
            let frames = (0..<10).flatMap { ServerFrame.bytes(.ping, Array("payload-\($0)".utf8)) }
            let socket = try await raw(engine, server, frames)
            #expect(await eventually(within: 10) { server.webSocketPongsReceived.count == 10 })
            #expect(server.webSocketPongsReceived == (0..<10).map { Array("payload-\($0)".utf8) })
            await socket.close()
        }
    }

    // MARK: 3 and 4: reserved bits and opcodes

    @Test("3.1-3.7: RSV1, RSV2, RSV3 without an extension fail the connection", arguments: [UInt8(0x40), 0x20, 0x10, 0x60, 0x70])
    func reservedBits(bits: UInt8) async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.text, Array("Hello".utf8), rsv: bits))
            #expect(await receiveFailure(socket)?.violationCode == .protocolError)
            #expect(await closeCodeTheServerReceived(server) == .some(1002))
        }
    }

    @Test("4.1.1-4.2.5: the reserved opcodes 3-7 and 11-15 fail the connection", arguments: [UInt8(3), 4, 5, 6, 7, 11, 12, 13, 14, 15])
    func reservedOpcodes(opcode: UInt8) async throws {
        try await withEngine { engine, server in
            let frames = ServerFrame.bytes(.text, Array("ok".utf8)) + [0x80 | opcode, 0x00]
            let socket = try await raw(engine, server, frames)
            #expect(try await socket.receive() == .text("ok"), "the frame before it is delivered")
            #expect(await receiveFailure(socket)?.violationCode == .protocolError)
        }
    }

    // MARK: 5: fragmentation

    @Test("5.1, 5.2: a fragmented ping or pong fails the connection", arguments: [ServerFrame.Opcode.ping, .pong])
    func fragmentedControlFrames(opcode: ServerFrame.Opcode) async throws {
        try await withEngine { engine, server in
            let frames = ServerFrame.bytes(opcode, Array("frag".utf8), fin: false) + ServerFrame.bytes(.continuation, Array("ment".utf8))
            let socket = try await raw(engine, server, frames)
            #expect(await receiveFailure(socket)?.violationCode == .protocolError)
        }
    }

    @Test("5.3-5.8: a fragmented text message is joined, with pings between its fragments answered")
    func fragmentsAreJoinedAroundPings() async throws {
        try await withEngine { engine, server in
            let frames =
                ServerFrame.bytes(.text, Array("frag".utf8), fin: false) + ServerFrame.bytes(.ping, Array("between".utf8))
                + ServerFrame.bytes(.continuation, Array("men".utf8), fin: false) + ServerFrame.bytes(.continuation, Array("ted".utf8))
            let socket = try await raw(engine, server, frames)
            #expect(try await socket.receive() == .text("fragmented"))
            #expect(await eventually(within: 10) { server.webSocketPongsReceived == [Array("between".utf8)] })
            await socket.close()
        }
    }

    @Test("5.9-5.14: a continuation with no message started fails the connection")
    func continuationFirst() async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.continuation, Array("fragment".utf8)))
            #expect(await receiveFailure(socket)?.violationCode == .protocolError)
        }
    }

    @Test("5.15-5.20: a new message started inside a fragmented one fails the connection")
    func nestedMessage() async throws {
        try await withEngine { engine, server in
            let frames = ServerFrame.bytes(.text, Array("one".utf8), fin: false) + ServerFrame.bytes(.text, Array("two".utf8))
            let socket = try await raw(engine, server, frames)
            #expect(await receiveFailure(socket)?.violationCode == .protocolError)
        }
    }

    // MARK: 6: UTF-8

    @Test("6.2-6.4: valid UTF-8 split inside a code point across fragments is joined")
    func utf8SplitAcrossFragments() async throws {
        try await withEngine { engine, server in
            let text = Array("κόσμε 𝄞".utf8)
            let frames =
                ServerFrame.bytes(.text, Array(text[0..<1]), fin: false) + ServerFrame.bytes(.continuation, Array(text[1..<9]), fin: false)
                + ServerFrame.bytes(.continuation, Array(text[9...]))
            let socket = try await raw(engine, server, frames)
            #expect(try await socket.receive() == .text("κόσμε 𝄞"))
            await socket.close()
        }
    }

    @Test(
        "6.3, 6.6-6.21: invalid UTF-8 fails with 1007",
        arguments: [
            [UInt8(0xCE), 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80, 0x65, 0x64, 0x69, 0x74, 0x65, 0x64],
            [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFE], [0xCE], [0x80],
        ])
    func invalidUTF8(bytes: [UInt8]) async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.text, bytes))
            #expect(await receiveFailure(socket)?.violationCode == .invalidFramePayloadData)
            #expect(await closeCodeTheServerReceived(server) == .some(1007))
        }
    }

    // MARK: 7: closing

    @Test("7.1.1, 7.3.1: a close without a payload is answered and ends the messages")
    func emptyClose() async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.close, []))
            #expect(try await socket.receive() == nil)
            #expect(socket.closeStatus?.code == 1005)
            #expect(await closeCodeTheServerReceived(server) == .some(nil), "an empty close is echoed empty")
        }
    }

    @Test("7.1.3-7.1.5: data after the server's close is not delivered")
    func dataAfterClose() async throws {
        try await withEngine { engine, server in
            var close = [UInt8(0x03), 0xE8]
            close += Array("bye".utf8)
            let socket = try await raw(engine, server, ServerFrame.bytes(.close, close) + ServerFrame.bytes(.text, Array("late".utf8)))
            #expect(try await socket.receive() == nil)
            #expect(socket.closeStatus?.code == 1000 && socket.closeStatus?.reason == "bye")
        }
    }

    @Test("7.3.2: a close with a 1-byte payload is a protocol error")
    func oneByteClose() async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.close, [0x03]))
            #expect(await receiveFailure(socket)?.violationCode == .protocolError)
        }
    }

    @Test("7.5.1: a close reason that is not UTF-8 fails with 1007")
    func closeReasonNotUTF8() async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.close, [0x03, 0xE8, 0xCE, 0xBA, 0xED, 0xA0, 0x80]))
            #expect(await receiveFailure(socket)?.violationCode == .invalidFramePayloadData)
        }
    }

    @Test("7.7.1-7.7.13: valid close codes are echoed", arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999])
    func validCloseCodes(code: Int) async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))
            _ = try? await socket.receive()
            #expect(socket.closeStatus?.code == code)
            #expect(await closeCodeTheServerReceived(server) == .some(code))
        }
    }

    @Test("7.9.1-7.9.9: invalid close codes fail with 1002", arguments: [0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999])
    func invalidCloseCodes(code: Int) async throws {
        try await withEngine { engine, server in
            let socket = try await raw(engine, server, ServerFrame.bytes(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))
            #expect(await receiveFailure(socket)?.violationCode == .protocolError)
            #expect(await closeCodeTheServerReceived(server) == .some(1002))
        }
    }

    // MARK: 9: limits

    @Test("9.1.1-9.2.4: messages of 64 KiB, 256 KiB and 1 MiB (the default limit) echo", arguments: [64 << 10, 256 << 10, 1 << 20])
    func largeMessages(size: Int) async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.perMessageDeflate = false
            let socket = try await openSocket(engine, server, "/ws/echo", options: options)
            let bytes = ByteBuffer(repeating: 0x2A, count: size)
            try await socket.send(.binary(bytes))
            #expect(try await socket.receive() == .binary(bytes))
            await socket.close()
        }
    }

    // MARK: 12 and 13: compression

    @Test(
        "12.1-13.7: compressed echoes of 16 B to 128 KiB under each parameter set",
        arguments: ["", "server_no_context_takeover", "client_no_context_takeover", "server_max_window_bits=9", "client_max_window_bits=9"])
    func compressedEchoes(parameters: String) async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/echo?deflate=\(parameters)")
            #expect(socket.perMessageDeflate != nil)
            var generator = SystemRandomNumberGenerator()
            for size in [16, 64, 256, 1024, 4096, 8192, 65_536, 131_072] {
                let words = (0..<size / 8 + 1).map { _ in ["alpha", "beta", "gamma", "delta"].randomElement(using: &generator) ?? "" }
                let text = String(words.joined(separator: " ").prefix(size))
                try await socket.send(.text(text))
                #expect(try await socket.receive() == .text(text))
            }
            await socket.close()
        }
    }
}
