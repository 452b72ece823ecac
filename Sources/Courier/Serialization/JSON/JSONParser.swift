import Foundation

/// A strict RFC 8259 parser from UTF-8 bytes to ``JSONValue``, so integers stay exact and
/// Booleans stay Booleans (`JSONSerialization` on Linux returns `NSNumber`s that blur both).
enum JSONParser {
    static let maximumDepth = 512

    static func parse(_ data: Data, allowFragments: Bool) throws(JSONParsingError) -> JSONValue {
        let bytes = [UInt8](data)
        var parser = Cursor(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        if !allowFragments, let first = parser.peek(), first != UInt8(ascii: "{"), first != UInt8(ascii: "[") {
            throw JSONParsingError(offset: parser.index, reason: "JSON text did not start with array or object")
        }
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index != bytes.count {
            throw JSONParsingError(offset: parser.index, reason: "garbage after the JSON value")
        }
        return value
    }

    struct Cursor {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        func fail(_ reason: String) -> JSONParsingError { JSONParsingError(offset: index, reason: reason) }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func expect(_ literal: String, _ value: JSONValue) throws(JSONParsingError) -> JSONValue {
            for byte in literal.utf8 {
                guard peek() == byte else { throw fail("invalid literal") }
                index += 1
            }
            return value
        }

        mutating func parseValue(depth: Int) throws(JSONParsingError) -> JSONValue {
            guard depth < JSONParser.maximumDepth else { throw fail("nesting deeper than \(JSONParser.maximumDepth)") }
            skipWhitespace()
            guard let byte = peek() else { throw fail("unexpected end of data") }
            switch byte {
            case UInt8(ascii: "{"): return try parseObject(depth: depth)
            case UInt8(ascii: "["): return try parseArray(depth: depth)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default: throw fail("unexpected character")
            }
        }

        mutating func parseObject(depth: Int) throws(JSONParsingError) -> JSONValue {
            index += 1
            var object = [String: JSONValue]()
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return .object(object)
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let key = try parseString()
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                object[key] = try parseValue(depth: depth + 1)
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return .object(object)
                default: throw fail("expected ',' or '}'")
                }
            }
        }

        mutating func parseArray(depth: Int) throws(JSONParsingError) -> JSONValue {
            index += 1
            var array = [JSONValue]()
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .array(array)
            }
            while true {
                array.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(array)
                default: throw fail("expected ',' or ']'")
                }
            }
        }

        mutating func parseNumber() throws(JSONParsingError) -> JSONValue {
            let start = index
            var isInteger = true
            if peek() == UInt8(ascii: "-") { index += 1 }
            guard let first = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
                throw fail("invalid number")
            }
            if first == UInt8(ascii: "0") {
                index += 1
            } else {
                skipDigits()
            }
            if peek() == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard skipDigits() > 0 else { throw fail("invalid number: no digits after '.'") }
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
                guard skipDigits() > 0 else { throw fail("invalid number: no digits in the exponent") }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let int = Int64(text) { return .int(int) }
            guard let double = Double(text), double.isFinite else { throw fail("number out of range") }
            return .double(double)
        }

        @discardableResult
        mutating func skipDigits() -> Int {
            let start = index
            while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            return index - start
        }

        mutating func parseString() throws(JSONParsingError) -> String {
            index += 1
            var output = [UInt8]()
            var segmentStart = index
            while true {
                guard let byte = peek() else { throw fail("unterminated string") }
                switch byte {
                case UInt8(ascii: "\""):
                    // Every escape adds bytes to `output`, so an empty one means none were
                    // seen: most strings are then validated straight from the input.
                    let string: String?
                    if output.isEmpty {
                        string = String(validating: bytes[segmentStart..<index], as: UTF8.self)
                    } else {
                        output.append(contentsOf: bytes[segmentStart..<index])
                        string = String(validating: output, as: UTF8.self)
                    }
                    index += 1
                    guard let string else { throw fail("string is not valid UTF-8") }
                    return string
                case UInt8(ascii: "\\"):
                    output.append(contentsOf: bytes[segmentStart..<index])
                    index += 1
                    try parseEscape(into: &output)
                    segmentStart = index
                case 0x00..<0x20:
                    throw fail("unescaped control character in string")
                default:
                    index += 1
                }
            }
        }

        mutating func parseEscape(into output: inout [UInt8]) throws(JSONParsingError) {
            guard let byte = peek() else { throw fail("unterminated escape") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(byte)
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                    else { throw fail("unpaired high surrogate") }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("invalid low surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw fail("unpaired low surrogate")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid scalar") }
                output.append(contentsOf: unicode.utf8)
            default:
                throw fail("invalid escape")
            }
        }

        mutating func parseHex4() throws(JSONParsingError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail("truncated \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw fail("invalid hex digit")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
    }
}
