import Foundation
import NIOHTTP1

/// Secondary cache keys (RFC 9111 §4.1): the request header fields a response's `Vary` names
/// and their values. Pure; no I/O.
enum CacheVary {
    /// The field names in `Vary` (lowercased; `*` kept as is).
    static func fieldNames(in responseHeaders: HTTPHeaders) -> [String] {
        responseHeaders["vary"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// The secondary key to store with a response: each varied name and the request's
    /// (normalized) value of it.
    static func secondaryKey(responseHeaders: HTTPHeaders, requestHeaders: HTTPHeaders) -> [String: String?] {
        var key: [String: String?] = [:]
        for name in fieldNames(in: responseHeaders) where name != "*" {
            key[name] = .some(normalizedValue(name, in: requestHeaders))
        }
        return key
    }

    /// Whether a stored secondary key matches a new request's header fields.
    static func matches(_ stored: [String: String?], requestHeaders: HTTPHeaders) -> Bool {
        stored.allSatisfy { name, value in normalizedValue(name, in: requestHeaders) == value }
    }

    /// All values of `name`, combined with `, ` and with runs of whitespace collapsed (§4.1
    /// allows this normalization); nil when absent.
    private static func normalizedValue(_ name: String, in headers: HTTPHeaders) -> String? {
        let values = headers[name]
        guard !values.isEmpty else { return nil }
        return values.flatMap { $0.split(separator: ",") }
            .map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") }
            .joined(separator: ", ")
    }
}
