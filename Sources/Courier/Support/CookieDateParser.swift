import Foundation

/// The date of a cookie's `Expires` attribute, read with RFC 6265 §5.1.1's forgiving algorithm,
/// which accepts every form servers send: `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 1123),
/// `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850), `Sun Nov  6 08:49:37 1994` (asctime),
/// `Sun, 06-Nov-1994 08:49:37 GMT`, and the like. Always UTC; the time-zone text is ignored.
/// Pure; no `DateFormatter`.
enum CookieDateParser {
    /// The instant, or nil when a part is missing or out of range (the attribute is then ignored).
    static func date(_ text: some StringProtocol) -> Date? {
        var hour: Int?, minute = 0, second = 0, day: Int?, month: Int?, year: Int?
        for token in tokens(Array(text.utf8)) {
            if hour == nil, let time = self.time(token) {
                (hour, minute, second) = (time.0, time.1, time.2)
            } else if day == nil, let value = leadingDigits(token, minimum: 1, maximum: 2) {
                day = value
            } else if month == nil, let value = self.month(token) {
                month = value
            } else if year == nil, let value = leadingDigits(token, minimum: 2, maximum: 4) {
                year = value
            }
        }
        guard let hour, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard year >= 1601, (1...daysIn(month, year)).contains(day), hour <= 23, minute <= 59, second <= 59 else {
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// `delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte)
            || (0x7B...0x7E).contains(byte)
    }

    private static func tokens(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(whereSeparator: isDelimiter)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// `minimum*maximum DIGIT ( non-digit *OCTET )`: the value of the leading digits.
    private static func leadingDigits(_ token: ArraySlice<UInt8>, minimum: Int, maximum: Int) -> Int? {
        let digits = token.prefix(while: isDigit)
        guard digits.count >= minimum, digits.count <= maximum else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `hms-time = time-field ":" time-field ":" time-field`, each one or two digits, then
    /// optionally a non-digit and anything.
    private static func time(_ token: ArraySlice<UInt8>) -> (Int, Int, Int)? {
        var fields: [Int] = []
        var rest = token[...]
        for index in 0..<3 {
            let digits = rest.prefix(while: isDigit)
            guard (1...2).contains(digits.count) else { return nil }
            fields.append(digits.reduce(0) { $0 * 10 + Int($1 - 0x30) })
            rest = rest.dropFirst(digits.count)
            if index < 2 {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                rest = rest.dropFirst()
            } else if let next = rest.first, isDigit(next) {
                return nil
            }
        }
        return (fields[0], fields[1], fields[2])
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// A token whose first three letters name a month, any case.
    private static func month(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    private static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
