/// One request item of HTTPie's syntax, as typed on the command line: `key==value`,
/// `key=value`, `key:=json`, `Header:value`, `Header;`, `field@path`, `@path`,
/// `key=@path` and `key:=@path`.
///
/// Parsing is pure: files named by `@` items are read later, by ``RequestBuilder``.
enum RequestItem: Equatable, Sendable {
    /// `name==value`: a query-string parameter.
    case query(name: String, value: String)
    /// `name=value`: a string field of the JSON object, or a form field.
    case dataField(name: String, value: String)
    /// `name=@path`: a string field whose value is the text of a file.
    case dataFieldFromFile(name: String, path: String)
    /// `name:=json`: a raw JSON value (`true`, `42`, `[1,2]`, `{"a":1}`), not yet validated.
    case rawJSONField(name: String, json: String)
    /// `name:=@path`: a raw JSON value read from a file.
    case rawJSONFieldFromFile(name: String, path: String)
    /// `Name:value`: a request header; `Name:` alone removes the header (a default one too).
    case header(name: String, value: String?)
    /// `Name;`: a header sent with an empty value.
    case emptyHeader(name: String)
    /// `field@path`: a file part of a multipart form.
    case fileField(name: String, path: String)
    /// `@path`: the whole request body, read from a file.
    case bodyFile(path: String)

    /// Why an item did not parse.
    struct ParseError: Error, Equatable, CustomStringConvertible {
        /// The item as typed.
        var item: String
        /// What is wrong with it.
        var reason: String

        /// The item is shown with control characters escaped (`\r`, `\n`), so it can't break
        /// the error line.
        var description: String {
            "invalid request item '\(MessageSanitizer.escapingControlCharacters(item))': \(reason)"
        }
    }

    /// The separators, longest first so that `:=@` wins over `:=` and `:` at one position.
    private static let separators = [":=@", "=@", "==", ":=", "=", "@", ":", ";"]

    /// Parses one item. The leftmost separator decides (`a=b:c` is a data field whose value
    /// is `b:c`); in the name, a backslash makes the next separator character literal
    /// (`a\=b==c` is the query parameter `a=b` with value `c`). The value is taken verbatim.
    /// - Throws: ``ParseError`` when the item has no separator or an empty name where one
    ///   is needed.
    static func parse(_ argument: String) throws(ParseError) -> RequestItem {
        let characters = Array(argument)
        var name = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "\\", index + 1 < characters.count, "=:@;\\".contains(characters[index + 1]) {
                name.append(characters[index + 1])
                index += 2
                continue
            }
            if let separator = separators.first(where: { matches($0, in: characters, at: index) }) {
                let value = String(characters[(index + separator.count)...])
                return try make(separator: separator, name: name, value: value, argument: argument)
            }
            name.append(character)
            index += 1
        }
        throw ParseError(
            item: argument,
            reason: "no separator; use name==value (query), name=value (field), name:=json (raw JSON), "
                + "Header:value (header) or field@file (file)"
        )
    }

    private static func make(separator: String, name: String, value: String, argument: String) throws(ParseError)
        -> RequestItem
    {
        if name.isEmpty && separator == "@" {
            guard !value.isEmpty else { throw ParseError(item: argument, reason: "no file name after '@'") }
            return .bodyFile(path: value)
        }
        guard !name.isEmpty else { throw ParseError(item: argument, reason: "the name before '\(separator)' is empty") }
        switch separator {
        case "==": return .query(name: name, value: value)
        case "=": return .dataField(name: name, value: value)
        case "=@": return .dataFieldFromFile(name: name, path: value)
        case ":=": return .rawJSONField(name: name, json: value)
        case ":=@": return .rawJSONFieldFromFile(name: name, path: value)
        case "@":
            guard !value.isEmpty else { throw ParseError(item: argument, reason: "no file name after '@'") }
            return .fileField(name: name, path: value)
        case ":":
            try checkHeader(name: name, value: value, argument: argument)
            return .header(name: name, value: value.isEmpty ? nil : value)
        default:
            guard value.isEmpty else {
                throw ParseError(item: argument, reason: "'Header;' sends an empty header and takes no value")
            }
            try checkHeader(name: name, value: value, argument: argument)
            return .emptyHeader(name: name)
        }
    }

    /// A header name is an RFC 9110 token; a value holds no control character but tab (a CR or
    /// LF would end the field and start another: header injection).
    private static func checkHeader(name: String, value: String, argument: String) throws(ParseError) {
        guard name.unicodeScalars.allSatisfy(isTokenCharacter) else {
            throw ParseError(item: argument, reason: "the header name '\(name)' is not a valid HTTP field name")
        }
        guard !containsControlCharacter(value) else {
            throw ParseError(item: argument, reason: "a header value can't hold CR, LF or other control characters")
        }
    }

    /// RFC 9110 `tchar`.
    static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": return true
        default: return "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
        }
    }

    /// Whether `text` holds a control character other than horizontal tab.
    static func containsControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }

    private static func matches(_ separator: String, in characters: [Character], at index: Int) -> Bool {
        let pattern = Array(separator)
        guard index + pattern.count <= characters.count else { return false }
        return Array(characters[index..<(index + pattern.count)]) == pattern
    }

    /// Whether the item contributes to the request body (HTTPie's "data items").
    var isData: Bool {
        switch self {
        case .dataField, .dataFieldFromFile, .rawJSONField, .rawJSONFieldFromFile, .fileField, .bodyFile: return true
        case .query, .header, .emptyHeader: return false
        }
    }
}
