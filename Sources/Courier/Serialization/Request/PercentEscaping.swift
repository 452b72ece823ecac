/// Percent-escapes `string` for a query string: AFNetworking's `AFPercentEscapedStringFromString`.
///
/// The allowed set is RFC 3986's query characters minus the delimiters `:#[]@` and the
/// sub-delimiters `!$&'()*+,;=`, which leaves letters, digits, `-._~` and — as RFC 3986 §3.4
/// allows — `?` and `/` unescaped. Everything else is written as `%XX` per UTF-8 byte, so a
/// space is `%20` (never `+`) and `%` is `%25` (already escaped input is escaped again).
///
/// AFNetworking escapes in 50-character batches widened to composed character sequences so a
/// surrogate pair is never split (#3028); a Swift `String` holds whole Unicode scalars, so
/// escaping byte by byte is correct for every scalar (emoji, combining marks, CJK).
/// Pure and thread-safe.
public func percentEscaped(_ string: String) -> String {
    var output = [UInt8]()
    output.reserveCapacity(string.utf8.count)
    for byte in string.utf8 {
        if PercentEscaping.isAllowed(byte) {
            output.append(byte)
        } else {
            output.append(UInt8(ascii: "%"))
            output.append(PercentEscaping.hexDigits[Int(byte >> 4)])
            output.append(PercentEscaping.hexDigits[Int(byte & 0x0F)])
        }
    }
    return String(decoding: output, as: UTF8.self)
}

/// The character table behind ``percentEscaped(_:)``.
enum PercentEscaping {
    static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Whether an ASCII byte stays as it is: `A-Z a-z 0-9 - . _ ~ / ?`.
    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
            UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }
}
