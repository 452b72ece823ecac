import Foundation
import Synchronization

/// Whether a `Set-Cookie` field removes its cookie (`Max-Age` ≤ 0, or `Expires` in the past).
///
/// FoundationNetworking's `HTTPCookie.cookies(withResponseHeaderFields:for:)` on Linux reads
/// neither attribute, so a server's "delete this cookie" would otherwise store an empty cookie.
/// Pure; `now` is injectable.
enum SetCookieExpiry {
    static func removesCookie(_ field: String, now: Date = Date()) -> Bool {
        var expires: Date?
        for attribute in field.split(separator: ";").dropFirst() {
            let parts = attribute.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            switch parts[0].lowercased() {
            case "max-age":
                // RFC 6265 §5.2.2: Max-Age wins over Expires.
                if let seconds = Int(parts[1]) { return seconds <= 0 }
            case "expires":
                expires = httpDate(parts[1])
            default:
                continue
            }
        }
        return expires.map { $0 <= now } ?? false
    }

    /// `Thu, 01 Jan 1970 00:00:00 GMT` (RFC 1123), `Thursday, 01-Jan-70 00:00:00 GMT` (RFC 850)
    /// or `Thu, 01-Jan-1970 00:00:00 GMT`. The formatters are made once; a `DateFormatter` is
    /// not safe to share unlocked.
    private static let formatters = Mutex(
        ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz"].map { format in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        })

    private static func httpDate(_ text: String) -> Date? {
        formatters.withLock { formatters in formatters.lazy.compactMap { $0.date(from: text) }.first }
    }
}
