/// Syntax colouring for XML and HTML bodies (`--pretty all|colors`): tag names, attribute names,
/// attribute values, comments and declarations get ANSI colours; the text itself is unchanged
/// (not re-indented). Pure; tolerant of malformed markup (what it can't read passes through).
enum MarkupFormatter {
    enum Style {
        static let tag = "\u{1B}[34m"  // blue, as JSON keys
        static let attribute = "\u{1B}[36m"  // cyan
        static let value = "\u{1B}[33m"  // yellow, as JSON strings
        static let comment = "\u{1B}[90m"  // grey
        static let declaration = "\u{1B}[35m"  // magenta: <?xml ...?>, <!DOCTYPE ...>
        static let reset = JSONFormatter.Style.reset
    }

    /// Whether `text` looks like markup: its first non-blank character is `<`.
    static func looksLikeMarkup(_ text: String) -> Bool {
        text.unicodeScalars.first { !$0.properties.isWhitespace } == "<"
    }

    /// `text` with colours around its markup.
    static func colorize(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        // Scalar by scalar: `UnicodeScalarView.append(contentsOf:)` re-copies the whole view
        // each time (quadratic in the number of tags).
        var out = ""
        out.reserveCapacity(text.utf8.count)
        var index = 0
        func emit(_ range: Range<Int>, _ color: String?) {
            guard !range.isEmpty else { return }
            if let color { out += color }
            for scalar in scalars[range] { out.unicodeScalars.append(scalar) }
            if color != nil { out += Style.reset }
        }
        /// Whether `pattern` starts at `start` (compared in place: this runs once per '<').
        func matches(_ pattern: String, at start: Int) -> Bool {
            var cursor = start
            for scalar in pattern.unicodeScalars {
                guard cursor < scalars.count, scalars[cursor] == scalar else { return false }
                cursor += 1
            }
            return true
        }
        func find(_ pattern: String, from start: Int) -> Int? {
            (start..<scalars.count).first { matches(pattern, at: $0) }
        }
        while index < scalars.count {
            guard scalars[index] == "<" else {
                let next = scalars[index...].firstIndex(of: "<") ?? scalars.count
                emit(index..<next, nil)
                index = next
                continue
            }
            if matches("<!--", at: index) {
                let end = (find("-->", from: index + 4).map { $0 + 3 }) ?? scalars.count
                emit(index..<end, Style.comment)
                index = end
            } else if index + 1 < scalars.count, scalars[index + 1] == "!" || scalars[index + 1] == "?" {
                let end = (scalars[index...].firstIndex(of: ">").map { $0 + 1 }) ?? scalars.count
                emit(index..<end, Style.declaration)
                index = end
            } else {
                index = tag(from: index, scalars: scalars, emit: emit)
            }
        }
        return out
    }

    /// Colours one tag starting at `start` (its `<`); returns the index after it.
    private static func tag(from start: Int, scalars: [Unicode.Scalar], emit: (Range<Int>, String?) -> Void) -> Int {
        var index = start + 1
        if index < scalars.count, scalars[index] == "/" { index += 1 }
        emit(start..<index, nil)
        let nameEnd = nameEnd(from: index, scalars)
        guard nameEnd > index else { return index }  // a lone '<': text
        emit(index..<nameEnd, Style.tag)
        index = nameEnd
        while index < scalars.count, scalars[index] != ">" {
            let scalar = scalars[index]
            if scalar == "\"" || scalar == "'" {
                let close = scalars[(index + 1)...].firstIndex(of: scalar).map { $0 + 1 } ?? scalars.count
                emit(index..<close, Style.value)
                index = close
            } else if isNameCharacter(scalar) {
                let end = self.nameEnd(from: index, scalars)
                emit(index..<end, Style.attribute)
                index = end
            } else {
                emit(index..<(index + 1), nil)
                index += 1
            }
        }
        if index < scalars.count {
            emit(index..<(index + 1), nil)
            index += 1
        }
        return index
    }

    private static func nameEnd(from start: Int, _ scalars: [Unicode.Scalar]) -> Int {
        var end = start
        while end < scalars.count, isNameCharacter(scalars[end]) { end += 1 }
        return end
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ":", ".": return true
        default: return scalar.value > 0x7F
        }
    }
}
