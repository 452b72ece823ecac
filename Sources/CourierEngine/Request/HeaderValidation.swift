import NIOHTTP1

/// Rejects header names and values that would let a caller split or smuggle requests.
///
/// A name must be an RFC 9110 token; a value must not contain CR, LF or NUL. Checked before any
/// I/O so a bad header is a typed error, never bytes on the wire.
package enum HeaderValidation {
    /// Throws for the first header whose name is not a token or whose value holds CR, LF or NUL.
    static func validate(_ headers: HTTPHeaders) throws(EngineError) {
        for (name, value) in headers {
            guard !name.isEmpty else { throw .invalidHeader(name: name, reason: "empty header name") }
            for byte in name.utf8 where !isTokenByte(byte) {
                throw .invalidHeader(name: name, reason: "the name contains a character that is not allowed in a header name")
            }
            guard isFieldValue(value) else {
                throw .invalidHeader(name: name, reason: "the value contains CR, LF or NUL")
            }
        }
    }

    /// An RFC 9110 §5.6.2 `tchar` (the bytes of a method or a header name). The one check of it
    /// in the package: the session layer's parsers and redaction use it too.
    @inline(__always)
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}

extension HeaderValidation {
    /// Whether `text` is a non-empty RFC 9110 token (a method or a header name).
    package static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `text` can be a header value (or a reason phrase) on the wire: no CR, LF or NUL.
    package static func isFieldValue(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}
