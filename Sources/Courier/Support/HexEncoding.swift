import Crypto

/// Lowercase hexadecimal text of bytes, two digits a byte: what Courier writes for every digest
/// (the cache's file names and secondary keys, image key suffixes, Digest authentication's
/// `response` and `cnonce`). One pass into a preallocated string; no `String(format:)` (which
/// goes through Foundation's formatter per byte, slow on Linux). Pure; thread-safe.
enum HexEncoding {
    /// `bytes` as lowercase hex: `[0x00, 0x0f, 0xff]` → `000fff`; empty for no bytes.
    static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        if let text = bytes.withContiguousStorageIfAvailable({ lowercase(UnsafeRawBufferPointer($0)) }) { return text }
        return Array(bytes).withUnsafeBytes { lowercase($0) }
    }

    /// The bytes in `buffer` as lowercase hex.
    static func lowercase(_ buffer: UnsafeRawBufferPointer) -> String {
        // Two digits a byte: a buffer holds at most Int.max / 2 bytes in practice; the
        // multiplication is checked all the same.
        let (length, overflow) = buffer.count.multipliedReportingOverflow(by: 2)
        precondition(!overflow, "HexEncoding: \(buffer.count) bytes do not fit in a string")
        return String(unsafeUninitializedCapacity: length) { text in
            var index = 0
            for byte in buffer {
                text[index] = digit(byte >> 4)
                text[index + 1] = digit(byte & 0x0F)
                index += 2
            }
            return index
        }
    }

    /// The ASCII lowercase hex digit for `value` (0...15).
    @inline(__always)
    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? 0x30 + value : 0x57 + value  // "0"..."9", "a"..."f"
    }
}

extension Digest {
    /// The digest's bytes as lowercase hex (``HexEncoding``).
    var hex: String { withUnsafeBytes { HexEncoding.lowercase($0) } }
}
