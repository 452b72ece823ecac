import Foundation
import NIOHTTP1

/// Validation of a stored response (RFC 9111 §4.3): the conditional header fields to send and
/// how a `304 Not Modified` updates the stored head. Pure; no I/O.
enum CacheValidation {
    /// The conditional fields for revalidating `entry`: `If-None-Match` from its `ETag`,
    /// `If-Modified-Since` from its `Last-Modified`. Empty when it has no validator (the
    /// request then goes out unconditional).
    static func conditionalHeaders(for entry: CacheEntry) -> [(name: String, value: String)] {
        let headers = entry.headers
        var fields: [(name: String, value: String)] = []
        if let etag = headers.first(name: "etag"), !etag.isEmpty {
            fields.append(("If-None-Match", etag))
        }
        if let lastModified = headers.first(name: "last-modified"), HTTPDate.parse(lastModified) != nil {
            fields.append(("If-Modified-Since", lastModified))
        }
        return fields
    }

    /// Header fields a 304 never replaces in the stored head: `Content-Length` (§3.2, the
    /// stored body keeps its length), `Content-Encoding` and `Content-Range` (the stored body
    /// keeps its coding and is whole: a 304 can't recode or cut it), and hop-by-hop fields (§3.1).
    static let unmergedFields: Set<String> = [
        "content-length", "content-encoding", "content-range", "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
        "trailer", "proxy-authenticate", "proxy-authorization",
    ]

    /// Whether a 304 with `notModifiedHeaders` validates `entry` (§4.3.4): when both carry a
    /// strong `ETag` they must be equal; a 304 without an `ETag` (or with a weak one) selects
    /// the entry that was validated.
    static func notModifiedMatches(_ entry: CacheEntry, notModifiedHeaders: HTTPHeaders) -> Bool {
        guard let new = notModifiedHeaders.first(name: "etag"), !new.hasPrefix("W/"),
            let stored = entry.headers.first(name: "etag"), !stored.hasPrefix("W/")
        else { return true }
        return new == stored
    }

    /// `entry` refreshed by a 304 (§3.2): each field of the 304 replaces the stored fields of
    /// that name (except ``unmergedFields``), and the entry's times become the validation's.
    static func merged(
        _ entry: CacheEntry, notModifiedHeaders: HTTPHeaders, requestTime: Date, responseTime: Date
    ) -> CacheEntry {
        var headers = entry.headers
        var replaced = Set<String>()
        for field in notModifiedHeaders {
            let name = field.name.lowercased()
            guard !unmergedFields.contains(name) else { continue }
            if replaced.insert(name).inserted { headers.remove(name: field.name) }
            headers.add(name: field.name, value: field.value)
        }
        var updated = entry
        updated.headers = headers
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }
}
