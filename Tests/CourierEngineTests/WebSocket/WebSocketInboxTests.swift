import NIOCore
import Testing

@testable import CourierEngine

/// The queue between a socket's channel handler and its reader, on its own: messages come out
/// in order, and a message read is no longer held by the queue.
@Suite("WebSocket inbox")
struct WebSocketInboxTests {
    /// Where `buffer`'s bytes are: a write to a buffer whose storage is shared copies it first,
    /// so the address moves exactly when someone else still holds the storage.
    private static func address(_ buffer: ByteBuffer) -> UInt {
        buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
    }

    @Test("a message read leaves the queue: its payload is held by nobody else")
    func aReadMessageIsNotKeptByTheQueue() async throws {
        let inbox = WebSocketInbox(resumeReading: {})
        var payloads = (0..<100).map { ByteBuffer(repeating: UInt8($0), count: 4096) }
        // Queued while nobody waits, then read one by one, as a reader that falls behind does.
        for payload in payloads { _ = inbox.deliver(.binary(payload)) }
        for index in payloads.indices {
            guard case .binary(let received)? = try await inbox.next() else {
                Issue.record("message \(index) missing")
                return
            }
            #expect(received.readableBytesView.first == UInt8(index))
        }
        for index in payloads.indices {
            let before = Self.address(payloads[index])
            payloads[index].setInteger(UInt8(255), at: 0)
            #expect(Self.address(payloads[index]) == before, "message \(index) is still held after it was read")
        }
    }
}
