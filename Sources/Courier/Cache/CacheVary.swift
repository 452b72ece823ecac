import Crypto
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
    /// (normalized) value of it. A response that isn't `public` (or is `private` too) varies on
    /// `Authorization` too (absent included), as if the server had said so: it answers the credentials sent, or
    /// their absence, and one cache may serve several users (RFC 9111 §3.5 lets a response to
    /// credentials be stored, not shared).
    static func secondaryKey(responseHeaders: HTTPHeaders, requestHeaders: HTTPHeaders) -> [String: String?] {
        var key: [String: String?] = [:]
        for name in fieldNames(in: responseHeaders) where name != "*" {
            key[name] = .some(normalizedValue(name, in: requestHeaders))
        }
        // `private` beside `public` conflicts; the more restrictive holds (§4.2.1).
        let control = CacheControl(responseHeaders["cache-control"])
        if !control.isPublic || control.isPrivate {
            key["authorization"] = .some(normalizedValue("authorization", in: requestHeaders))
        }
        return key
    }

    /// Request fields holding credentials: a secondary key keeps a digest of their value, never
    /// the value (the disk store writes keys to its metadata files).
    static let credentialFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// Whether a stored secondary key matches a new request's header fields.
    static func matches(_ stored: [String: String?], requestHeaders: HTTPHeaders) -> Bool {
        stored.allSatisfy { name, value in normalizedValue(name, in: requestHeaders) == value }
    }

    /// All values of `name`, combined with `, ` and with runs of whitespace collapsed (§4.1
    /// allows this normalization); nil when absent. For a ``credentialFields`` name, the
    /// SHA-256 of that text, in hex.
    private static func normalizedValue(_ name: String, in headers: HTTPHeaders) -> String? {
        let values = headers[name]
        guard !values.isEmpty else { return nil }
        let text = values.flatMap { $0.split(separator: ",") }
            .map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") }
            .joined(separator: ", ")
        guard credentialFields.contains(name.lowercased()) else { return text }
        return "sha256:" + SHA256.hash(data: Data(text.utf8)).hex
    }
}
