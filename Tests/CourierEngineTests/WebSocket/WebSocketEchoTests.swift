import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// The engine's WebSocket against the test server's endpoints: the handshake, echoes with and
/// without permessage-deflate, pings both ways, the close handshake in both directions.
@Suite("WebSocket: echo, ping, close")
struct WebSocketEchoTests {
    @Test func textAndBinaryMessagesEchoAndTheCloseHandshakeCompletes() async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/echo")
            #expect(socket.responseHead.status == .switchingProtocols)
            try await socket.send(.text("héllo, wörld"))
            #expect(try await socket.receive() == .text("héllo, wörld"))
            let bytes = ByteBuffer(bytes: (0..<70_000).map { UInt8(truncatingIfNeeded: $0) })
            try await socket.send(.binary(bytes))
            #expect(try await socket.receive() == .binary(bytes))
            try await socket.send(.text(""))
            #expect(try await socket.receive() == .text(""))
            await socket.close(code: 1000, reason: "done")
            #expect(socket.closeStatus?.code == 1000)
            #expect(try await socket.receive() == nil, "a normal close ends the messages")
            #expect(await closeCodeTheServerReceived(server) == .some(1000))
        }
    }

    @Test func aSmallBinaryMessageHoldsOnlyItsOwnBytes() async throws {
        // A reader may keep messages: each must not keep the read buffer it arrived in.
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.perMessageDeflate = false
            let socket = try await openSocket(engine, server, "/ws/echo", options: options)
            // Large messages first: the connection's reads grow to their largest buffers.
            let large = ByteBuffer(repeating: 1, count: 256 << 10)
            for _ in 0..<4 {
                try await socket.send(.binary(large))
                #expect(try await socket.receive() == .binary(large))
            }
            for size in [1, 32, 1_000] {
                try await socket.send(.binary(ByteBuffer(repeating: 7, count: size)))
                guard case .binary(let echo)? = try await socket.receive() else {
                    Issue.record("no binary echo of \(size) bytes")
                    continue
                }
                #expect(echo.readableBytes == size)
                #expect(echo.storageCapacity <= size * 2 + 4096, "a \(size)-byte message holds \(echo.storageCapacity) bytes")
            }
            await socket.close()
        }
    }

    @Test func permessageDeflateIsNegotiatedAndMessagesRoundTripCompressed() async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/echo")
            #expect(socket.perMessageDeflate != nil)
            let text = String(repeating: "compressible text ", count: 5_000)
            for _ in 0..<3 {  // context takeover: later messages use the window of earlier ones
                try await socket.send(.text(text))
                #expect(try await socket.receive() == .text(text))
            }
            await socket.close()
        }
    }

    @Test(arguments: [
        "server_no_context_takeover,client_no_context_takeover",
        "client_max_window_bits=9,server_max_window_bits=10",
        "client_max_window_bits=8",
    ])
    func deflateParametersTheServerChoosesAreHonoured(parameters: String) async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/echo?deflate=\(parameters)")
            let negotiated = try #require(socket.perMessageDeflate)
            #expect(negotiated.serverNoContextTakeover == parameters.contains("server_no_context_takeover"))
            #expect(negotiated.clientNoContextTakeover == parameters.contains("client_no_context_takeover"))
            if parameters.contains("client_max_window_bits=8") { #expect(negotiated.clientMaxWindowBits == 8) }
            let text = String(repeating: "abcdefgh", count: 4_000)
            for _ in 0..<3 {
                try await socket.send(.text(text))
                #expect(try await socket.receive() == .text(text))
            }
            await socket.close()
        }
    }

    @Test func withoutDeflateOfferedNothingIsCompressed() async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.perMessageDeflate = false
            let socket = try await openSocket(engine, server, "/ws/echo", options: options)
            #expect(socket.perMessageDeflate == nil)
            #expect(socket.responseHead.headers["sec-websocket-extensions"].isEmpty)
            try await socket.send(.text("plain"))
            #expect(try await socket.receive() == .text("plain"))
            await socket.close()
        }
    }

    @Test func theServerChoosesAnOfferedSubprotocol() async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.protocols = ["chat.v2", "chat.v1"]
            let socket = try await openSocket(engine, server, "/ws/echo", options: options)
            #expect(socket.negotiatedProtocol == "chat.v2")
            await socket.close()
        }
    }

    @Test func serverPingsAreAnsweredWithTheirPayload() async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/ping?count=3")
            #expect(await eventually(within: 10) { server.webSocketPongsReceived.count == 3 })
            #expect(server.webSocketPongsReceived == ["ping-1", "ping-2", "ping-3"].map { Array($0.utf8) })
            await socket.close()
        }
    }

    @Test func aPingReturnsItsRoundTrip() async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/echo")
            let roundTrip = try await socket.ping()
            #expect(roundTrip > .zero)
            await socket.close()
        }
    }

    @Test func automaticPingsWithoutAPongDropTheConnection() async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.pingInterval = .milliseconds(100)
            options.pongTimeout = .milliseconds(300)
            // The slow endpoint stops reading for 30 s after a message: the pings go unanswered.
            let socket = try await openSocket(engine, server, "/ws/slow?delay=30000", options: options)
            // On a busy machine a pong can be late before the server even stops reading: the
            // outcome is the same, so the send may already find the connection dropped.
            try? await socket.send(.text("hold"))
            let failure = await receiveFailure(socket)
            guard case .pongTimedOut = failure else {
                Issue.record("expected a pong timeout, got \(String(describing: failure))")
                return
            }
            #expect(socket.closeStatus?.code == 1006)
        }
    }

    @Test func aServerCloseWithItsCodeAndReasonIsReported() async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/close?code=4001&reason=bye%20now")
            let failure = await receiveFailure(socket)
            #expect(failure == .closedByServer(code: 4001, reason: "bye now"))
            #expect(socket.closeStatus?.code == 4001)
            #expect(socket.closeStatus?.reason == "bye now")
            #expect(await closeCodeTheServerReceived(server) == .some(4001), "the close is echoed")
        }
    }

    @Test func aNormalServerCloseEndsTheMessages() async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/close?code=1000")
            #expect(try await socket.receive() == nil)
            #expect(socket.closeStatus?.code == 1000)
            await #expect(throws: WebSocketError.self) { try await socket.send(.text("late")) }
        }
    }

    /// The close returns although the server never answers it (a hang here is the failure).
    @Test(.timeLimit(.minutes(1)))
    func aServerThatNeverAnswersTheCloseIsLeftAfterTheCloseWait() async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.closeTimeout = .milliseconds(200)
            let socket = try await openSocket(engine, server, "/ws/hostile/no-close-reply", options: options)
            await socket.close(code: 1000)
            #expect(socket.closeStatus?.code == 1000)
            #expect(await closeCodeTheServerReceived(server) == .some(1000))
        }
    }

    @Test func aRefusedHandshakeHandsBackTheResponse() async throws {
        try await withEngine { engine, server in
            let url = try #require(URL(string: server.baseURL.absoluteString.replacingOccurrences(of: "http", with: "ws") + "/status/403"))
            guard case .refused(let head, _, _) = try await engine.openWebSocket(EngineRequest(url: url)) else {
                Issue.record("a 403 opened a socket")
                return
            }
            #expect(head.status == .forbidden)
        }
    }

    @Test func aWrongAcceptFailsTheHandshake() async throws {
        try await withEngine { engine, server in
            let url = try #require(URL(string: server.baseURL.absoluteString.replacingOccurrences(of: "http", with: "ws") + "/ws/hostile/bad-accept"))
            do {
                _ = try await engine.openWebSocket(EngineRequest(url: url))
                Issue.record("a wrong Sec-WebSocket-Accept was taken")
            } catch let error as WebSocketError {
                guard case .handshakeFailed(let reason) = error else { throw error }
                #expect(reason.contains("Sec-WebSocket-Accept"))
            }
        }
    }

    @Test func wssWorksThroughTheEnginesTLSSettings() async throws {
        var configuration = EngineConfiguration()
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        configuration.tls.trustsSystemRoots = false
        try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
            let socket = try await openSocket(engine, server, "/ws/echo")
            try await socket.send(.text("over TLS"))
            #expect(try await socket.receive() == .text("over TLS"))
            #expect(socket.metrics.secureConnectionStart != nil)
            await socket.close()
        }
    }

    /// A caller's limit past what a frame can carry (NIO's decoder traps past 2^32-1) or below 1
    /// is brought into range, not a crash: the socket opens and echoes.
    @Test(arguments: [Int.max, Int(UInt32.max) + 1, 0, -1])
    func anOutOfRangeMessageLimitIsBroughtIntoRange(limit: Int) async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.maximumMessageSize = limit
            options.perMessageDeflate = false  // the 1-byte echo must fit a 1-byte limit as it is
            let socket = try await openSocket(engine, server, "/ws/echo", options: options)
            try await socket.send(.text("x"))
            #expect(try await socket.receive() == .text("x"))
            await socket.close()
        }
    }

    @Test func aMessageLargerThanTheLimitClosesWith1009() async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.maximumMessageSize = 1_000
            options.perMessageDeflate = false
            let socket = try await openSocket(engine, server, "/ws/echo", options: options)
            try await socket.send(.text(String(repeating: "x", count: 2_000)))
            #expect(await receiveFailure(socket)?.violationCode == .messageTooBig)
            #expect(await closeCodeTheServerReceived(server) == .some(1009))
        }
    }
}
