import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// A server that breaks RFC 6455 or RFC 7692: the client closes with the RFC's code (and
/// sends it to the server in its close frame), and the reader gets the violation.
@Suite("WebSocket: hostile servers")
struct WebSocketHostileServerTests {
    @Test(arguments: [
        ("masked", WebSocketCloseCode.protocolError),
        ("bad-utf8", .invalidFramePayloadData),
        ("oversize", .messageTooBig),
        ("fragmented-control", .protocolError),
        ("long-control", .protocolError),
        ("reserved-bits", .protocolError),
        ("reserved-opcode", .protocolError),
        ("orphan-continuation", .protocolError),
    ])
    func aViolationClosesWithTheRFCsCode(mode: String, code: WebSocketCloseCode) async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/hostile/\(mode)")
            let failure = await receiveFailure(socket)
            #expect(failure?.violationCode == code, "\(mode): \(String(describing: failure))")
            #expect(socket.closeStatus?.code == code.rawValue)
            #expect(await closeCodeTheServerReceived(server) == .some(code.rawValue), "\(mode): the close frame names the code")
        }
    }

    /// 16 MiB of zeros deflate to about 16 KiB: inflation stops at the 1 MiB limit (1009)
    /// instead of growing memory to 16 MiB.
    @Test func aDeflateBombIsAMessageTooBig() async throws {
        try await withEngine { engine, server in
            let socket = try await openSocket(engine, server, "/ws/hostile/bomb?size=16777216")
            #expect(socket.perMessageDeflate != nil)
            #expect(await receiveFailure(socket)?.violationCode == .messageTooBig)
            #expect(await closeCodeTheServerReceived(server) == .some(1009))
        }
    }

    @Test func aFloodIsDeliveredWholeAndInOrderToALateReader() async throws {
        try await withEngine { engine, server in
            var options = WebSocketOptions()
            options.perMessageDeflate = false
            let socket = try await openSocket(engine, server, "/ws/flood?count=2000&size=4096", options: options)
            try await Task.sleep(for: .milliseconds(300))  // the flood arrives while nobody reads
            var received = 0
            while received < 2_000, let message = try await socket.receive() {
                guard case .binary(let bytes) = message, bytes.readableBytes == 4096 else {
                    Issue.record("unexpected message")
                    break
                }
                received += 1
            }
            #expect(received == 2_000, "every message arrives, in order, once the reader reads")
            await socket.close()
        }
    }
}
