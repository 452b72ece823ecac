public import NIOCore

/// One whole WebSocket message (its fragments joined, inflated when it was compressed).
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message (opcode 1), valid UTF-8.
    case text(String)
    /// A binary message (opcode 2).
    case binary(ByteBuffer)
}
