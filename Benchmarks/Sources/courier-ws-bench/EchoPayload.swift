import Foundation
import NIOCore

/// The messages of a run and how their echoes are checked. Message `index` of socket `socket`
/// is `size` bytes: an 8-byte stamp, `socket << 32 | index` little-endian, then the bytes
/// `i % 251` of a template shared by every message. An echo passes when it has the size, the
/// stamp of the message just sent and the template's bytes after it.
struct EchoPayload: Sendable {
    /// The bytes of every message.
    let size: Int
    private let template: ByteBuffer
    private let templateData: Data

    /// The largest message any client accepts: 1 MiB (Courier's default), above the 64 KiB
    /// the cases send; websocket-kit's and Hummingbird's frame limits are raised to it.
    static let maximumMessageSize = 1 << 20

    /// The stamp's width, and so the smallest message size.
    static let stampSize = 8

    init(size: Int) {
        precondition(size >= Self.stampSize, "a message holds at least its 8-byte stamp")
        self.size = size
        var buffer = ByteBufferAllocator().buffer(capacity: size)
        for index in 0..<size { buffer.writeInteger(UInt8(truncatingIfNeeded: index % 251)) }
        template = buffer
        templateData = Data(buffer.readableBytesView)
    }

    static func stamp(socket: Int, index: Int) -> UInt64 {
        UInt64(truncatingIfNeeded: socket) << 32 | UInt64(truncatingIfNeeded: index)
    }

    /// Message `index` of `socket`, as a ByteBuffer (a copy of the template, stamped).
    func buffer(socket: Int, index: Int) -> ByteBuffer {
        var buffer = template
        buffer.setInteger(Self.stamp(socket: socket, index: index), at: buffer.readerIndex, endianness: .little)
        return buffer
    }

    /// Message `index` of `socket`, as Data (for Foundation-shaped APIs).
    func data(socket: Int, index: Int) -> Data {
        var data = templateData
        let stamp = Self.stamp(socket: socket, index: index).littleEndian
        data.withUnsafeMutableBytes { bytes in bytes.storeBytes(of: stamp, as: UInt64.self) }
        return data
    }

    /// Checks that `echo` is message `index` of `socket`.
    func check(_ echo: ByteBuffer, socket: Int, index: Int) throws {
        try echo.withUnsafeReadableBytes { bytes in try check(bytes, socket: socket, index: index) }
    }

    /// Checks that `echo` is message `index` of `socket`.
    func check(_ echo: Data, socket: Int, index: Int) throws {
        try echo.withUnsafeBytes { bytes in try check(bytes, socket: socket, index: index) }
    }

    private func check(_ bytes: UnsafeRawBufferPointer, socket: Int, index: Int) throws {
        guard bytes.count == size else {
            throw EchoError.mismatch("echo #\(index) of socket \(socket) has \(bytes.count) bytes, sent \(size)")
        }
        let stamp = UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
        guard stamp == Self.stamp(socket: socket, index: index) else {
            throw EchoError.mismatch("echo #\(index) of socket \(socket) carries stamp \(stamp >> 32):\(stamp & 0xFFFF_FFFF)")
        }
        let same = template.withUnsafeReadableBytes { expected in
            guard let sent = expected.baseAddress, let received = bytes.baseAddress else { return false }
            return memcmp(sent + Self.stampSize, received + Self.stampSize, size - Self.stampSize) == 0
        }
        guard same else { throw EchoError.mismatch("echo #\(index) of socket \(socket) differs from the message sent") }
    }
}
