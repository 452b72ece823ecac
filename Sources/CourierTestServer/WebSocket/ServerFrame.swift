import Foundation

/// Builds raw server frames (unmasked unless asked), for the hostile endpoints and tests.
public enum ServerFrame {
    /// A frame's opcode, reserved ones included.
    public enum Opcode: UInt8, Sendable {
        case continuation = 0x0, text = 0x1, binary = 0x2, reserved3 = 0x3, close = 0x8, ping = 0x9, pong = 0xA, reservedB = 0xB
    }

    /// One frame: `fin`, the reserved bits `rsv` (0x40 RSV1, 0x20 RSV2, 0x10 RSV3), `opcode`,
    /// `payload`, masked with `mask` when given (which no server may do).
    public static func bytes(_ opcode: Opcode, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, mask: [UInt8]? = nil) -> [UInt8] {
        var bytes = header(opcode, length: payload.count, fin: fin, rsv: rsv, masked: mask != nil)
        if let mask, mask.count == 4 {
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        } else {
            bytes += payload
        }
        return bytes
    }

    /// A frame header announcing `length` payload bytes.
    public static func header(_ opcode: Opcode, length: Int, fin: Bool = true, rsv: UInt8 = 0, masked: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv | opcode.rawValue]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch length {
        case ..<126:
            bytes.append(maskBit | UInt8(length))
        case ..<65536:
            bytes.append(maskBit | 126)
            bytes += [UInt8(length >> 8), UInt8(length & 0xFF)]
        default:
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8((UInt64(length) >> (UInt64($0) * 8)) & 0xFF) }
        }
        return bytes
    }

    /// `bytes` in the URL-safe base64 the `/ws/raw?frames=` endpoint takes.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
