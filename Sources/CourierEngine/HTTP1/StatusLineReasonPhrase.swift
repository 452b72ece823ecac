import NIOHTTP1

/// Reads the server's own reason phrase from an HTTP/1 status line (`HTTP/1.1 200 Fine Thanks`),
/// which NIO's response decoder drops (its head carries the standard phrase for the code).
///
/// Pure and bounded: looks at no more than ``maximumLineLength`` bytes, accepts only
/// `HTTP/<digit>.<digit> SP <3 digits> SP <phrase> CRLF` with a phrase of visible ASCII, space
/// and tab, and answers nil for anything else, so a caller falls back to the standard phrase
/// rather than showing a wrong or hostile one.
enum StatusLineReasonPhrase {
    /// The most bytes looked at for one status line (the line, CRLF included).
    static let maximumLineLength = 1024

    /// The code and reason phrase of the status line at the start of `bytes`, when the phrase
    /// differs from the standard one for the code (nil when it is the standard one, empty,
    /// malformed, longer than ``maximumLineLength``, or not all there yet). No allocation unless
    /// the phrase is a custom one.
    static func customPhrase<Bytes: Collection<UInt8>>(atStartOf bytes: Bytes) -> (code: Int, reasonPhrase: String)? {
        // "HTTP/1.1 200 " is 13 bytes; the phrase follows, then CRLF.
        var index = bytes.startIndex
        var position = 0
        var code = 0
        var phraseStart = bytes.startIndex
        while index != bytes.endIndex, position < maximumLineLength {
            let byte = bytes[index]
            switch position {
            case 0: guard byte == UInt8(ascii: "H") else { return nil }
            case 1, 2: guard byte == UInt8(ascii: "T") else { return nil }
            case 3: guard byte == UInt8(ascii: "P") else { return nil }
            case 4: guard byte == UInt8(ascii: "/") else { return nil }
            case 5, 7: guard isDigit(byte) else { return nil }
            case 6: guard byte == UInt8(ascii: ".") else { return nil }
            case 8, 12: guard byte == UInt8(ascii: " ") else { return nil }
            case 9, 10, 11:
                guard isDigit(byte) else { return nil }
                code = code &* 10 &+ Int(byte &- UInt8(ascii: "0"))
            default:
                if position == 13 { phraseStart = index }
                if byte == UInt8(ascii: "\r") {
                    let next = bytes.index(after: index)
                    guard next != bytes.endIndex, bytes[next] == UInt8(ascii: "\n"), position > 13 else { return nil }
                    let phrase = bytes[phraseStart..<index]
                    let standard = HTTPResponseStatus(statusCode: code).reasonPhrase
                    if phrase.elementsEqual(standard.utf8) { return nil }
                    return (code, String(decoding: phrase, as: UTF8.self))
                }
                guard byte == UInt8(ascii: "\t") || (0x20...0x7E).contains(byte) else { return nil }
            }
            index = bytes.index(after: index)
            position += 1
        }
        return nil
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
