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

    /// The secondary key to store with a response: each varied name and a digest of the
    /// request's (normalized) value of it (``digest(ofNormalized:)``; nil: absent). Never the
    /// value itself, whatever the name: a server may vary on any field (`X-Api-Key`,
    /// `X-CSRF-Token`) and the disk store writes keys to its metadata files. A response that
    /// isn't `public` (or is `private` too) varies on `Authorization` and `Cookie` too (absent
    /// included), as if the server had said so: it
    /// answers the credentials or session sent, or their absence, and one cache may serve
    /// several users (RFC 9111 §3.5 lets a response to credentials be stored, not shared; a
    /// server process's users differ by their session cookie as often as by `Authorization`).
    /// The key sees the request as sent: the session adds the cookie jar's `Cookie` before the
    /// cache looks the request up.
    static func secondaryKey(responseHeaders: HTTPHeaders, requestHeaders: HTTPHeaders) -> [String: String?] {
        var key: [String: String?] = [:]
        for name in fieldNames(in: responseHeaders) where name != "*" {
            key[name] = .some(normalizedValue(name, in: requestHeaders))
        }
        for name in impliedFieldNames(responseHeaders: responseHeaders) {
            key[name] = .some(normalizedValue(name, in: requestHeaders))
        }
        return key
    }

    /// The request fields a response is keyed on beyond its `Vary`: none for a `public`
    /// response (the server said it is the same for everyone), else `authorization` and
    /// `cookie`. `private` beside `public` conflicts; the more restrictive holds (§4.2.1).
    static func impliedFieldNames(responseHeaders: HTTPHeaders) -> [String] {
        let control = CacheControl(responseHeaders["cache-control"])
        return !control.isPublic || control.isPrivate ? CredentialHeaders.userFields : []
    }

    /// Whether a stored secondary key holds every field ``impliedFieldNames(responseHeaders:)``
    /// names for `responseHeaders`: false for a key made under an older rule, or for a `public`
    /// entry whose head a 304 made non-public (served as is, it would reach every user).
    static func coversImpliedFields(_ stored: [String: String?], responseHeaders: HTTPHeaders) -> Bool {
        impliedFieldNames(responseHeaders: responseHeaders).allSatisfy { stored.keys.contains($0) }
    }

    /// Whether a stored secondary key matches a new request's header fields.
    static func matches(_ stored: [String: String?], requestHeaders: HTTPHeaders) -> Bool {
        stored.allSatisfy { name, value in normalizedValue(name, in: requestHeaders) == value }
    }

    /// All values of `name`, combined with `, ` and with runs of whitespace collapsed (§4.1
    /// allows this normalization), as ``digest(ofNormalized:)``; nil when absent. Two requests
    /// match exactly when their normalized texts are equal, as they would in clear.
    private static func normalizedValue(_ name: String, in headers: HTTPHeaders) -> String? {
        let values = headers[name]
        guard !values.isEmpty else { return nil }
        let text = values.flatMap { $0.split(separator: ",") }
            .map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") }
            .joined(separator: ", ")
        return digest(ofNormalized: text)
    }

    /// What a secondary key holds for a normalized field value: `sha256:` and the SHA-256 of
    /// its UTF-8 bytes, in lowercase hex (71 characters).
    static func digest(ofNormalized text: String) -> String {
        digestPrefix + SHA256.hash(data: Data(text.utf8)).hex
    }

    /// What every value in a secondary key starts with.
    static let digestPrefix = "sha256:"

    /// Whether every value in `key` is absent or a digest (``digest(ofNormalized:)``'s form):
    /// false for a key stored before every value was digested (only credential fields were)
    /// that holds a value in clear.
    static func holdsDigestsOnly(_ key: [String: String?]) -> Bool {
        key.values.allSatisfy { value in
            guard let value else { return true }
            return value.utf8.count == digestPrefix.utf8.count + 64 && value.hasPrefix(digestPrefix)
                && value.utf8.dropFirst(digestPrefix.utf8.count).allSatisfy {
                    (0x30...0x39).contains($0) || (0x61...0x66).contains($0)
                }
        }
    }
}
