import Foundation

/// One `Strict-Transport-Security` field value, parsed by RFC 6797 §6.1. Pure: no clock, no
/// network.
///
/// The grammar: directives separated by `;`, each a token name, optionally `=` and a token or
/// quoted-string value, names compared case-insensitively. The field is refused whole (nil)
/// when `max-age` is missing or not a number of seconds, when any directive appears twice
/// (§6.1: "all directives MUST appear only once"), when `includeSubDomains` has a value, or
/// when a directive is not a token. Directives Courier does not know (`preload`) are ignored,
/// as the RFC says.
struct StrictTransportSecurityHeader: Equatable, Sendable {
    /// `max-age`, in seconds; zero means "forget this host". Values past ``maximumAge`` are
    /// read as that.
    var maxAge: Int64
    /// `includeSubDomains`.
    var includesSubdomains: Bool

    /// The longest lifetime kept: 10 years (browsers cap it lower; a bigger number only risks
    /// overflowing a date).
    static let maximumAge: Int64 = 10 * 366 * 86_400

    /// Parses `value`; nil when the RFC says to ignore the field.
    static func parse(_ value: String) -> StrictTransportSecurityHeader? {
        var maxAge: Int64?
        var includesSubdomains = false
        var seen: Set<String> = []
        for rawDirective in splitDirectives(value) {
            let directive = rawDirective.trimmingCharacters(in: .httpWhitespace)
            // Empty directives (`max-age=1;;` or a trailing `;`) are allowed by the grammar's `*`.
            guard !directive.isEmpty else { continue }
            let name: String
            var directiveValue: String?
            if let equals = directive.firstIndex(of: "=") {
                name = directive[..<equals].trimmingCharacters(in: .httpWhitespace).lowercased()
                let rawValue = directive[directive.index(after: equals)...].trimmingCharacters(in: .httpWhitespace)
                guard let unquoted = unquote(rawValue) else { return nil }
                directiveValue = unquoted
            } else {
                name = directive.lowercased()
            }
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(isTokenCharacter) else { return nil }
            guard seen.insert(name).inserted else { return nil }
            switch name {
            case "max-age":
                guard let text = directiveValue, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    return nil
                }
                // All digits: only an overflow fails to convert, and that is "very long".
                maxAge = min(Int64(text) ?? maximumAge, maximumAge)
            case "includesubdomains":
                guard directiveValue == nil else { return nil }
                includesSubdomains = true
            default:
                continue
            }
        }
        guard let maxAge else { return nil }
        return StrictTransportSecurityHeader(maxAge: maxAge, includesSubdomains: includesSubdomains)
    }

    /// Splits at `;` outside quoted strings.
    private static func splitDirectives(_ value: String) -> [Substring] {
        QuotedListSplitter.split(value, at: ";")
    }

    /// A token as it is, a quoted-string without its quotes and escapes; nil when neither.
    private static func unquote(_ value: String) -> String? {
        guard value.hasPrefix("\"") else {
            return value.unicodeScalars.allSatisfy(isTokenCharacter) ? value : nil
        }
        guard value.count >= 2, value.hasSuffix("\"") else { return nil }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return nil
            } else {
                result.append(character)
            }
        }
        return escaped ? nil : result
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": return true
        case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~": return true
        default: return false
        }
    }
}

extension CharacterSet {
    /// Space and horizontal tab (RFC 9110 `OWS`).
    fileprivate static let httpWhitespace = CharacterSet(charactersIn: " \t")
}
