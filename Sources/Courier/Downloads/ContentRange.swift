/// A `Content-Range` field of a byte-range response (RFC 9110 §14.4), parsed strictly:
/// `bytes first-last/complete`, `bytes first-last/*` or `bytes */complete`, every number plain
/// ASCII digits that fit in `Int64`, `first <= last`, and `last < complete` when the complete
/// length is known. Anything else (`bytes 5-*/*`, signs, spaces inside, other units) is nil.
struct ContentRange: Equatable, Sendable {
    /// The first byte's position; nil for an unsatisfied range (`bytes */N`).
    var first: Int64?
    /// The last byte's position (inclusive); nil for an unsatisfied range.
    var last: Int64?
    /// The representation's complete length; nil when the server sent `*`.
    var completeLength: Int64?

    init(first: Int64?, last: Int64?, completeLength: Int64?) {
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }

    /// Parses a field value; nil when it is not a valid single byte range.
    init?(_ value: String) {
        let text = Substring(value).trimmingOWS()
        guard text.count > 6, text.prefix(6).lowercased() == "bytes " else { return nil }
        let spec = text.dropFirst(6)
        guard let slash = spec.firstIndex(of: "/") else { return nil }
        let rangePart = spec[..<slash]
        let completePart = spec[spec.index(after: slash)...]
        var complete: Int64?
        if completePart != "*" {
            guard let number = Self.number(completePart) else { return nil }
            complete = number
        }
        if rangePart == "*" {
            // Unsatisfied range: only with a known complete length.
            guard complete != nil else { return nil }
            self.init(first: nil, last: nil, completeLength: complete)
            return
        }
        guard let dash = rangePart.firstIndex(of: "-"),
            let first = Self.number(rangePart[..<dash]),
            let last = Self.number(rangePart[rangePart.index(after: dash)...]),
            first <= last
        else { return nil }
        if let complete, last >= complete { return nil }
        self.init(first: first, last: last, completeLength: complete)
    }

    /// The number of bytes the range covers (`last - first + 1`); nil for an unsatisfied
    /// range or when the count does not fit in `Int64`.
    var length: Int64? {
        guard let first, let last else { return nil }
        let (span, overflow) = (last - first).addingReportingOverflow(1)
        return overflow ? nil : span
    }

    /// Plain ASCII digits that fit in `Int64`; nil otherwise (no sign, no spaces, not empty).
    static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(text)
    }

    /// The offset of a resume request's `Range: bytes=N-`; nil for any other value.
    static func requestedOffset(rangeHeader: String?) -> Int64? {
        guard let rangeHeader else { return nil }
        let text = Substring(rangeHeader).trimmingOWS()
        guard text.count > 7, text.prefix(6).lowercased() == "bytes=", text.hasSuffix("-") else { return nil }
        return number(text.dropFirst(6).dropLast())
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate func trimmingOWS() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
