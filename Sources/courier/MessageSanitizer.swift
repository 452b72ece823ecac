/// Cleans text before `courier` prints it: URL passwords are dropped (HTTPie prints
/// `http://user@host`), library source locations (`at /…/tls_record.cc:127`,
/// `SwiftASN1/ASN1.swift:202`) are removed, and BoringSSL's error stacks become their reason
/// codes in words. Pure.
enum MessageSanitizer {
    /// `text` with every URL password dropped and every source location removed.
    static func clean(_ text: String) -> String {
        withoutSourceLocations(withoutPasswords(text))
    }

    /// `scheme://user:password@host` → `scheme://user@host`, anywhere in `text`.
    static func withoutPasswords(_ text: String) -> String {
        // The user part stops at ':'; the password runs to the authority's last '@'.
        let pattern = #/(?<prefix>[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]*):[^\s/?#]*@/#
        return text.replacing(pattern) { match in match.output.prefix + "@" }
    }

    /// `text` without ` at /path/file.cc:127` and `Module/File.swift:202` locations.
    static func withoutSourceLocations(_ text: String) -> String {
        // A path (no ':' or whitespace, at least one '/') after whitespace, so a URL such as
        // `http://example.cc:8080` is never taken for one.
        let location = #/(?:\s+at)?\s+[^\s:]*/[^\s:/]*\.(?:swift|cc|c|cpp|h):\d+/#
        var cleaned = text.replacing(location, with: "")
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
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }) else {
            return text
        }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": escaped += "\\r"
            case "\n": escaped += "\\n"
            case "\t": escaped += keepingTabs ? "\t" : "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value):
                escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

extension String {
    /// Foundation-free `replacingOccurrences(of:with:)`.
    fileprivate func replacingOccurrences(_ target: String, with replacement: String) -> String {
        replacing(target, with: replacement)
    }
}
