import Foundation

/// One `Set-Cookie` field as RFC 6265bis §5.6 reads it, before the storage rules (domain,
/// public suffix, `Secure`, prefixes) decide whether it is kept. Pure: dates are absolute,
/// `Max-Age` is left as the server's number of seconds.
struct SetCookie: Equatable, Sendable {
    var name: String
    var value: String
    /// `Expires`, when it parsed.
    var expires: Date?
    /// `Max-Age` in seconds (saturated at `Int.max`/`Int.min`); wins over `Expires`.
    var maxAge: Int?
    /// `Domain`, lowercased, without a leading dot; nil when absent or empty.
    var domain: String?
    /// `Path`, when present and starting with `/`; otherwise nil (the default path applies).
    var path: String?
    var secure = false
    var httpOnly = false
    var sameSite: HTTPCookieJar.SameSite = .unspecified
}

/// Parses `Set-Cookie` field values (RFC 6265bis §5.6).
///
/// - The name-value pair runs to the first `;`; without `=` the name is empty and the whole
///   pair is the value. Names and values are trimmed of spaces and tabs.
/// - A field with a control character (other than tab), with an empty name and value, or whose
///   name and value together exceed ``maximumNameValueBytes`` is ignored (nil).
/// - Attribute names are case-insensitive; when one repeats, the last wins; an attribute value
///   over ``maximumAttributeValueBytes`` is ignored, as are unknown attributes.
enum SetCookieParser {
    /// RFC 6265bis: name plus value at most 4096 bytes.
    static let maximumNameValueBytes = 4_096
    /// RFC 6265bis: an attribute value at most 1024 bytes.
    static let maximumAttributeValueBytes = 1_024

    static func parse(_ field: String) -> SetCookie? {
        guard !field.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        var parts = field.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let pair = parts.popFirst() else { return nil }
        let name: Substring, value: Substring
        if let equals = pair.firstIndex(of: "=") {
            name = trimmed(pair[..<equals])
            value = trimmed(pair[pair.index(after: equals)...])
        } else {
            name = ""
            value = trimmed(pair)
        }
        guard !(name.isEmpty && value.isEmpty), name.utf8.count + value.utf8.count <= maximumNameValueBytes else {
            return nil
        }
        var cookie = SetCookie(name: String(name), value: String(value))
        for attribute in parts {
            let attributeName: Substring, attributeValue: Substring
            if let equals = attribute.firstIndex(of: "=") {
                attributeName = trimmed(attribute[..<equals])
                attributeValue = trimmed(attribute[attribute.index(after: equals)...])
            } else {
                attributeName = trimmed(attribute)
                attributeValue = ""
            }
            guard attributeValue.utf8.count <= maximumAttributeValueBytes else { continue }
            apply(attributeName.lowercased(), attributeValue, to: &cookie)
        }
        return cookie
    }

    private static func apply(_ name: String, _ value: Substring, to cookie: inout SetCookie) {
        switch name {
        case "expires":
            if let date = CookieDateParser.date(value) { cookie.expires = date }
        case "max-age":
            if let seconds = maxAge(value) { cookie.maxAge = seconds }
        case "domain":
            // An empty Domain is ignored (RFC 6265bis §5.6.3: the user agent SHOULD).
            var domain = value
            if domain.hasPrefix(".") { domain = domain.dropFirst() }
            if !domain.isEmpty { cookie.domain = domain.lowercased() }
        case "path":
            cookie.path = value.hasPrefix("/") ? String(value) : nil
        case "secure":
            cookie.secure = true
        case "httponly":
            cookie.httpOnly = true
        case "samesite":
            switch value.lowercased() {
            case "strict": cookie.sameSite = .strict
            case "lax": cookie.sameSite = .lax
            case "none": cookie.sameSite = .none
            default: cookie.sameSite = .unspecified
            }
        default:
            break
        }
    }

    /// `-?DIGIT+`, saturating instead of overflowing; nil for anything else.
    static func maxAge(_ text: Substring) -> Int? {
        var digits = text[...]
        let negative = digits.hasPrefix("-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        var result = 0
        for byte in digits.utf8 {
            let (shifted, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int(byte - 0x30))
            if overflow1 || overflow2 { return negative ? Int.min : Int.max }
            result = sum
        }
        return negative ? -result : result
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
