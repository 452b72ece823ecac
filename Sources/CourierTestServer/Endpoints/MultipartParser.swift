/// One part of a `multipart/form-data` body.
struct MultipartPart: Equatable {
    /// The part's header fields, names lowercased, in order.
    var headers: [(name: String, value: String)]
    /// The body of the part.
    var body: [UInt8]

    /// The `name` parameter of `Content-Disposition`.
    var name: String? { self.dispositionParameters["name"] }

    /// The `filename` parameter of `Content-Disposition` (`filename*` when only that is given);
    /// its presence is what makes a part a file, as in Werkzeug.
    var filename: String? {
        let parameters = self.dispositionParameters
        if let name = parameters["filename"] { return name }
        guard let extended = parameters["filename*"] else { return nil }
        // RFC 5987: charset'language'percent-encoded
        let pieces = extended.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        return PercentDecoding.decode(String(pieces.last ?? ""), plusAsSpace: false)
    }

    /// The part's `Content-Type`, if it has one.
    var contentType: String? { self.header("content-type") }

    func header(_ name: String) -> String? {
        self.headers.first { $0.name == name }?.value
    }

    private var dispositionParameters: [String: String] {
        guard let disposition = self.header("content-disposition") else { return [:] }
        return HeaderParameters.parse(disposition)
    }

    static func == (lhs: MultipartPart, rhs: MultipartPart) -> Bool {
        lhs.body == rhs.body && lhs.headers.map { [$0.name, $0.value] } == rhs.headers.map { [$0.name, $0.value] }
    }
}

/// Parses complete `multipart/form-data` bodies (RFC 7578, RFC 2046 §5.1.1).
///
/// Lenient where browsers and curl differ (preamble, transport padding after a delimiter,
/// bare `LF` line ends in part headers), strict where it matters: a body without a final
/// `--boundary--` delimiter is rejected.
enum MultipartParser {
    /// The `boundary` parameter of a `multipart/...` content type, unquoted.
    static func boundary(fromContentType contentType: String) -> String? {
        guard let boundary = HeaderParameters.parse(contentType)["boundary"], !boundary.isEmpty else { return nil }
        return boundary
    }

    /// Splits `body` into its parts, or returns `nil` when it is not a well-formed multipart body.
    static func parse(_ body: [UInt8], boundary: String) -> [MultipartPart]? {
        let delimiter = Array("--\(boundary)".utf8)
        let bodyDelimiter = Array("\r\n--\(boundary)".utf8)
        // The first delimiter may start the body or follow a preamble line.
        var position: Int
        if body.starts(with: delimiter) {
            position = delimiter.count
        } else if let found = ByteSearch.firstIndex(of: bodyDelimiter, in: body, from: 0) {
            position = found + bodyDelimiter.count
        } else {
            return nil
        }

        var parts: [MultipartPart] = []
        while true {
            // After a delimiter: `--` closes the body; otherwise padding then a line end.
            if body.count >= position + 2, body[position] == UInt8(ascii: "-"), body[position + 1] == UInt8(ascii: "-") {
                return parts
            }
            while position < body.count, body[position] == UInt8(ascii: " ") || body[position] == UInt8(ascii: "\t") {
                position += 1
            }
            if body.count >= position + 2, body[position] == UInt8(ascii: "\r"), body[position + 1] == UInt8(ascii: "\n") {
                position += 2
            } else if position < body.count, body[position] == UInt8(ascii: "\n") {
                position += 1
            } else {
                return nil
            }

            guard let (headers, bodyStart) = self.parseHeaders(body, from: position),
                let end = ByteSearch.firstIndex(of: bodyDelimiter, in: body, from: bodyStart)
            else {
                return nil
            }
            parts.append(MultipartPart(headers: headers, body: Array(body[bodyStart..<end])))
            position = end + bodyDelimiter.count
        }
    }

    /// Reads header lines up to the empty line; returns them and where the part's body starts.
    private static func parseHeaders(_ body: [UInt8], from start: Int) -> ([(name: String, value: String)], Int)? {
        var headers: [(name: String, value: String)] = []
        var position = start
        while true {
            guard let lineEnd = body[position...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            var line = body[position..<lineEnd]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            position = lineEnd + 1
            if line.isEmpty { return (headers, position) }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            let name = String(decoding: line[..<colon], as: UTF8.self).trimmingASCIIWhitespace().lowercased()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingASCIIWhitespace()
            headers.append((name, value))
        }
    }
}

/// Parameters of header values such as `form-data; name="a"; filename="b.txt"` or
/// `multipart/form-data; boundary=xyz`.
enum HeaderParameters {
    /// Parameter names lowercased; quoted values unquoted (with `\"` escapes resolved).
    static func parse(_ value: String) -> [String: String] {
        var result: [String: String] = [:]
        var characters = Substring(value)
        // Skip the leading token (the disposition type or media type).
        guard let firstSemicolon = characters.firstIndex(of: ";") else { return result }
        characters = characters[characters.index(after: firstSemicolon)...]
        while !characters.isEmpty {
            characters = characters.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let equals = characters.firstIndex(of: "=") else { break }
            let name = characters[..<equals].trimmingASCIIWhitespace().lowercased()
            characters = characters[characters.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var parsed = ""
            if characters.first == "\"" {
                characters = characters.dropFirst()
                var escaped = false
                while let character = characters.first {
                    characters = characters.dropFirst()
                    if escaped {
                        parsed.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        parsed.append(character)
                    }
                }
                characters = characters.drop { $0 != ";" }
            } else {
                let end = characters.firstIndex(of: ";") ?? characters.endIndex
                parsed = characters[..<end].trimmingASCIIWhitespace()
                characters = characters[end...]
            }
            if !name.isEmpty, result[name] == nil {
                result[name] = parsed
            }
        }
        return result
    }
}

/// Searching byte arrays for a byte sequence.
enum ByteSearch {
    /// The index where `needle` first occurs in `haystack` at or after `start`.
    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        let last = haystack.count - needle.count
        var index = start
        while index <= last {
            if haystack[index] == first {
                var matched = true
                var offset = 1
                while offset < needle.count {
                    if haystack[index + offset] != needle[offset] {
                        matched = false
                        break
                    }
                    offset += 1
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}
