import Courier
import Foundation

/// Re-indents JSON text without reordering keys or rewriting numbers (HTTPie keeps the
/// server's order), optionally with ANSI colours.
enum JSONFormatter {
    /// The colours of each token kind.
    enum Style {
        static let key = "\u{1B}[34m"  // blue
        static let string = "\u{1B}[33m"  // yellow
        static let number = "\u{1B}[36m"  // cyan
        static let literal = "\u{1B}[35m"  // magenta: true, false, null
        static let reset = "\u{1B}[0m"
    }

    /// The most output formatting `count` bytes may make: 1 MiB, plus 64 times the input
    /// (far above what ordinary documents need; indentation grows with depth, so a deep
    /// document with a long flat array inside could otherwise make about 1000 times its size).
    static func maximumOutput(forInput count: Int) -> Int {
        let (scaled, overflow) = count.multipliedReportingOverflow(by: 64)
        return overflow ? Int.max : (1 << 20) + min(scaled, Int.max - (1 << 20))
    }

    /// The formatted text, or nil when `data` is not a JSON document or its formatting would
    /// be longer than ``maximumOutput(forInput:)`` (the caller prints it as it came).
    static func format(_ data: Data, indent: Int = 4, colors: Bool) -> String? {
        guard (try? JSONValue(parsing: data)) != nil, let text = String(data: data, encoding: .utf8) else { return nil }
        let scalars = Array(text.unicodeScalars)
        var output = ""
        var depth = 0
        var index = 0
        func newline() { output += "\n" + String(repeating: " ", count: depth * indent) }
        func paint(_ token: String, _ color: String) -> String { colors ? color + token + Style.reset : token }
        func nextSignificant(after position: Int) -> Unicode.Scalar? {
            var cursor = position
            while cursor < scalars.count, isWhitespace(scalars[cursor]) { cursor += 1 }
            return cursor < scalars.count ? scalars[cursor] : nil
        }
        let outputLimit = maximumOutput(forInput: data.count)
        while index < scalars.count {
            guard output.utf8.count <= outputLimit else { return nil }
            let scalar = scalars[index]
            switch scalar {
            case " ", "\t", "\n", "\r":
                index += 1
            case "\"":
                var end = index + 1
                while end < scalars.count, scalars[end] != "\"" {
                    end += scalars[end] == "\\" ? 2 : 1
                }
                end = min(end + 1, scalars.count)
                let token = String(String.UnicodeScalarView(scalars[index..<end]))
                output += paint(token, nextSignificant(after: end) == ":" ? Style.key : Style.string)
                index = end
            case "{", "[":
                let close: Unicode.Scalar = scalar == "{" ? "}" : "]"
                if nextSignificant(after: index + 1) == close {
                    output += String(scalar) + String(close)
                    var cursor = index + 1
                    while scalars[cursor] != close { cursor += 1 }
                    index = cursor + 1
                } else {
                    output.unicodeScalars.append(scalar)
                    depth += 1
                    newline()
                    index += 1
                }
            case "}", "]":
                depth -= 1
                newline()
                output.unicodeScalars.append(scalar)
                index += 1
            case ",":
                output += ","
                newline()
                index += 1
            case ":":
                output += ": "
                index += 1
            default:
                var end = index
                while end < scalars.count, !isDelimiter(scalars[end]) { end += 1 }
                let token = String(String.UnicodeScalarView(scalars[index..<end]))
                let isLiteral = token == "true" || token == "false" || token == "null"
                output += paint(token, isLiteral ? Style.literal : Style.number)
                index = max(end, index + 1)
            }
        }
        return output
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    private static func isDelimiter(_ scalar: Unicode.Scalar) -> Bool {
        isWhitespace(scalar) || scalar == "," || scalar == "}" || scalar == "]" || scalar == ":"
    }
}
