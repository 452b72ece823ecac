/// Splits a header value at a separator (`,` in a list, `;` between directives) wherever it
/// stands outside a quoted string (RFC 9110 §5.6.4: `\` escapes the next character inside
/// quotes). Each part is returned as it is, untrimmed.
enum QuotedListSplitter {
    static func split(_ value: String, at separator: Character) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex
        var inQuotes = false
        var escaped = false
        var index = value.startIndex
        while index < value.endIndex {
            let character = value[index]
            if escaped {
                escaped = false
            } else if inQuotes, character == "\\" {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == separator, !inQuotes {
                parts.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        parts.append(value[start...])
        return parts
    }
}
