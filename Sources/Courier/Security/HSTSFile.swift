import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file an ``HSTSStore`` is kept in: curl's HSTS cache format, so `courier --hsts FILE` and
/// `curl --hsts FILE` can share one. One host a line, a leading `.` when its policy includes
/// subdomains, then its expiry in quotes (`"YYYYMMDD HH:MM:SS"`, UTC) or `"unlimited"`; `#`
/// starts a comment line:
///
/// ```
/// # Your HSTS cache. https://curl.se/docs/hsts.html
/// .example.com "20271208 12:00:00"
/// api.example.org "unlimited"
/// ```
///
/// Reading is tolerant, as curl's: a line that isn't an entry is skipped. Writing is atomic:
/// a temporary file beside the destination, renamed over it.
enum HSTSFile {
    /// The largest file read: 16 MiB (about 300,000 entries, far past any store's cap).
    static let maximumFileSize = 16 << 20

    /// The entries of `text`, in file order; lines that don't parse are skipped.
    static func entries(in text: String) -> [HSTSStore.Entry] {
        var entries: [HSTSStore.Entry] = []
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            if let entry = entry(in: line) { entries.append(entry) }
        }
        return entries
    }

    /// One line's entry, or nil for a comment or anything malformed.
    static func entry(in line: Substring) -> HSTSStore.Entry? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#"),
            let space = trimmed.firstIndex(where: { $0 == " " || $0 == "\t" })
        else { return nil }
        var name = Substring(trimmed[..<space])
        let rest = trimmed[space...].trimmingCharacters(in: .whitespaces)
        guard rest.count >= 2, rest.hasPrefix("\""), rest.hasSuffix("\"") else { return nil }
        let stamp = String(rest.dropFirst().dropLast())
        let includesSubdomains = name.hasPrefix(".")
        if includesSubdomains { name = name.dropFirst() }
        guard let host = HSTSPolicyTable.canonicalHost(String(name)), !CookieMatching.isIPAddress(host) else { return nil }
        let expires: Date?
        if stamp == "unlimited" {
            expires = nil
        } else {
            guard let date = date(from: stamp) else { return nil }
            expires = date
        }
        return HSTSStore.Entry(host: host, includesSubdomains: includesSubdomains, expiresDate: expires)
    }

    /// The file's text for `entries` (sorted by host, so the file is stable).
    static func text(for entries: [HSTSStore.Entry]) -> String {
        var text = "# Your HSTS cache. https://curl.se/docs/hsts.html\n# Written by Courier. Edit at your own risk.\n"
        for entry in entries.sorted(by: { $0.host < $1.host }) {
            let stamp = entry.expiresDate.map(stampText) ?? "unlimited"
            text += "\(entry.includesSubdomains ? "." : "")\(entry.host) \"\(stamp)\"\n"
        }
        return text
    }

    // MARK: - Dates

    /// `YYYYMMDD HH:MM:SS` in UTC, or nil.
    static func date(from stamp: String) -> Date? {
        let bytes = Array(stamp.utf8)
        guard bytes.count == 17, bytes[8] == UInt8(ascii: " "), bytes[11] == UInt8(ascii: ":"), bytes[14] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
            let minute = number(12..<14), let second = number(15..<17),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        return utcCalendar.date(from: components)
    }

    /// `date` as `YYYYMMDD HH:MM:SS` in UTC.
    static func stampText(_ date: Date) -> String {
        let parts = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String {
            let number = value ?? 0
            return number < 10 ? "0\(number)" : "\(number)"
        }
        let year = String(parts.year ?? 1970)
        let paddedYear = String(repeating: "0", count: max(0, 4 - year.count)) + year
        return "\(paddedYear)\(two(parts.month))\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
    }

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()

    // MARK: - I/O

    /// The text of the file at `url`; nil when there is none (a store starts empty, as curl's).
    /// - Throws: ``CourierError/hstsFileFailed(path:reason:)`` when it can't be read, isn't a
    ///   regular file, is larger than ``maximumFileSize`` or isn't UTF-8.
    static func read(_ url: URL) throws(CourierError) -> String? {
        let path = url.path
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw .hstsFileFailed(path: path, reason: String(cString: strerror(errno)))
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .hstsFileFailed(path: path, reason: "not a regular file") }
        guard Int(status.st_size) <= maximumFileSize else {
            throw .hstsFileFailed(path: path, reason: "larger than \(maximumFileSize) bytes")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .hstsFileFailed(path: path, reason: "\(error.localizedDescription)")
        }
        guard data.count <= maximumFileSize, let text = String(data: data, encoding: .utf8) else {
            throw .hstsFileFailed(path: path, reason: "not a UTF-8 text file of at most \(maximumFileSize) bytes")
        }
        return text
    }

    /// Writes `text` to `url` atomically (a temporary file in the same folder, mode 0600,
    /// flushed, then renamed over the destination).
    /// - Throws: ``CourierError/hstsFileFailed(path:reason:)``.
    static func write(_ text: String, to url: URL) throws(CourierError) {
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .hstsFileFailed(path: url.path, reason: String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(text.utf8))
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(temporary.path)
            throw .hstsFileFailed(path: url.path, reason: "\(error.localizedDescription)")
        }
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw .hstsFileFailed(path: url.path, reason: reason)
        }
    }
}
