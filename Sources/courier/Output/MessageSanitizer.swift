/// Cleans text before `courier` prints it: URL passwords are dropped (HTTPie prints
/// `http://user@host`), library source locations (`at /…/tls_record.cc:127`,
/// `SwiftASN1/ASN1.swift:202`) are removed, and BoringSSL's error stacks become their reason
/// codes in words. Pure.
enum MessageSanitizer {
    /// `text` with every URL password dropped and every source location removed.
    static func clean(_ text: String) -> String {
        withoutSourceLocations(withoutLocationFields(withoutPasswords(text)))
    }

    /// `text` without the source-location fields SwiftNIO's errors print:
    /// `Name(file: "NIOHTTP2/HTTP2ChannelHandler.swift", line: 686)` → `Name`, and
    /// `Name(delta: 1, location: NIOHTTP2/File.swift:98)` → `Name(delta: 1)`.
    static func withoutLocationFields(_ text: String) -> String {
        var result = text.replacing(#/\(file: "[^"]*", line: \d+\)/#, with: "")
        result = result.replacing(#/, file: "[^"]*", line: \d+(?=\))/#, with: "")
        result = result.replacing(#/\(location: [^)]*\)/#, with: "")
        result = result.replacing(#/, location: [^)]*(?=\))/#, with: "")
        return result
    }

    /// `scheme://user:password@host` → `scheme://user@host`, anywhere in `text`. The user part
    /// stops at its first ':'; the password runs to the authority's last '@'. One pass from each `://`
    /// (linear: the text may hold what a server chose, such as a redirect's Location).
    static func withoutPasswords(_ text: String) -> String {
        let characters = Array(text)
        let count = characters.count
        func isSchemeCharacter(_ c: Character) -> Bool {
            c.isASCII && (c.isLetter || c.isNumber || c == "+" || c == "." || c == "-")
        }
        func endsAuthority(_ c: Character) -> Bool { c.isWhitespace || c == "/" || c == "?" || c == "#" }
        var output = ""
        var copied = 0  // characters[..<copied] are in output (or dropped)
        var index = 0
        while index + 2 < count {
            guard characters[index] == ":", characters[index + 1] == "/", characters[index + 2] == "/" else {
                index += 1
                continue
            }
            // A scheme: scheme characters before "://", the first of them (after what was already
            // handled) a letter somewhere in the run.
            var schemeStart = index
            while schemeStart > copied, isSchemeCharacter(characters[schemeStart - 1]) { schemeStart -= 1 }
            guard characters[schemeStart..<index].contains(where: { $0.isASCII && $0.isLetter }) else {
                index += 3
                continue
            }
            // The user information runs to the authority's last '@' (the host follows it, as the
            // engine reads a URL); the user is up to its first ':', the password the rest. A user
            // may hold '@' (`a@b:c@h`: user `a@b`, password `c`).
            let authorityStart = index + 3
            var authorityEnd = authorityStart
            var lastAt: Int?
            while authorityEnd < count, !endsAuthority(characters[authorityEnd]) {
                if characters[authorityEnd] == "@" { lastAt = authorityEnd }
                authorityEnd += 1
            }
            guard let lastAt, let userEnd = characters[authorityStart..<lastAt].firstIndex(of: ":") else {
                index = authorityStart  // a ':' in it may begin the next "://"
                continue
            }
            output.append(contentsOf: characters[copied..<userEnd])
            output.append("@")
            copied = lastAt + 1
            index = copied
        }
        output.append(contentsOf: characters[copied...])
        return output
    }

    /// `text` without ` at /path/file.cc:127` and `Module/File.swift:202` locations: after
    /// whitespace (and an optional `at` and whitespace), a run without ':' or whitespace holding
    /// a '/' whose last component ends in `.swift`, `.cc`, `.c`, `.cpp` or `.h`, then ':' and
    /// digits. So a URL such as `http://example.cc:8080` is never taken for one. Linear.
    static func withoutSourceLocations(_ text: String) -> String {
        let characters = Array(text)
        let count = characters.count
        func whitespaceEnd(from start: Int) -> Int {
            var end = start
            while end < count, characters[end].isWhitespace { end += 1 }
            return end
        }
        // The end of a location starting at `start` (after its digits), or nil.
        func locationEnd(at start: Int) -> Int? {
            var colon = start
            var lastSlash: Int?
            while colon < count, !characters[colon].isWhitespace, characters[colon] != ":" {
                if characters[colon] == "/" { lastSlash = colon }
                colon += 1
            }
            guard colon < count, let lastSlash else { return nil }  // at a ':'
            let file = String(characters[(lastSlash + 1)..<colon])
            guard [".swift", ".cc", ".c", ".cpp", ".h"].contains(where: { file.hasSuffix($0) }) else { return nil }
            var end = colon + 1
            while end < count, characters[end].isASCII, characters[end].isNumber { end += 1 }
            return end > colon + 1 ? end : nil
        }
        var output = ""
        var index = 0
        while index < count {
            guard characters[index].isWhitespace else {
                output.append(characters[index])
                index += 1
                continue
            }
            let tokenStart = whitespaceEnd(from: index)
            if let end = locationEnd(at: tokenStart) {
                index = end
                continue
            }
            if tokenStart + 2 <= count, characters[tokenStart] == "a", characters[tokenStart + 1] == "t" {
                let afterAt = whitespaceEnd(from: tokenStart + 2)
                if afterAt > tokenStart + 2, let end = locationEnd(at: afterAt) {
                    index = end
                    continue
                }
            }
            output.append(contentsOf: characters[index..<tokenStart])
            index = tokenStart
        }
        var cleaned = output
        for (leftover, replacement) in [(":)", ")"), (": )", ")"), ("()", "")] {
            cleaned = cleaned.replacingOccurrences(leftover, with: replacement)
        }
        return cleaned
    }

    /// A TLS failure as a reason a user can read: BoringSSL's stack
    /// (`sslError([Error: … error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at …])`)
    /// becomes its reason codes in words (`wrong version number`); any other text is cleaned.
    static func tlsReason(_ text: String) -> String {
        let code = #/error:[0-9A-Fa-f]+:[^:\]]*:[^:\]]*:(?<reason>[A-Z0-9_]+)/#
        var reasons: [String] = []
        for match in text.matches(of: code) {
            let words = match.output.reason.lowercased().replacingOccurrences("_", with: " ")
            if !reasons.contains(words) { reasons.append(words) }
        }
        return reasons.isEmpty ? clean(text) : reasons.joined(separator: "; ")
    }

    /// `text` with control characters (CR, LF, NUL, ESC, the C1 controls U+0080...U+009F, …)
    /// shown as escapes (`\r`, `\n`, `\u{1B}`), so an echoed item can't break or forge a line
    /// or drive the terminal. With `keepingTabs` a horizontal tab stays as it is (it is allowed
    /// in a header value).
    static func escapingControlCharacters(_ text: String, keepingTabs: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": escaped += "\\r"
            case "\n": escaped += "\\n"
            case "\t": escaped += keepingTabs ? "\t" : "\\t"
            case _ where isControl(scalar):
                escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Whether `scalar` is a control character: C0 (U+0000...U+001F), DEL or C1 (U+0080...U+009F).
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value)
    }
}

extension String {
    /// Foundation-free `replacingOccurrences(of:with:)`.
    fileprivate func replacingOccurrences(_ target: String, with replacement: String) -> String {
        replacing(target, with: replacement)
    }
}
