import Foundation

/// HTTP dates (RFC 9110 §5.6.7): parses IMF-fixdate, the obsolete RFC 850 and asctime forms
/// (through the lenient ``CookieDateParser``). Pure; no I/O. (Tests write dates with
/// `CacheEndpoints.httpDate`, the test server's.)
enum HTTPDate {
    /// The date in `text`, or nil when it is not a date.
    static func parse(_ text: String?) -> Date? {
        guard let text, !text.isEmpty, text.utf8.count < 256 else { return nil }
        return CookieDateParser.date(text)
    }
}
