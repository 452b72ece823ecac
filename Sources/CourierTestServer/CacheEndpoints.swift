import Foundation
import NIOHTTP1

/// httpbin's caching endpoints: conditional requests and `Cache-Control`.
enum CacheEndpoints {
    /// `/cache`: 304 when the request is conditional (`If-Modified-Since` or `If-None-Match`),
    /// otherwise the `/get` dictionary with a fresh `Last-Modified` and `ETag`.
    static func cache(_ request: ServerRequest) -> ServerReply {
        if request.headers.contains(name: "if-modified-since") || request.headers.contains(name: "if-none-match") {
            return .empty(.notModified)
        }
        let etag = "\"" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() + "\""
        return .json(
            .object(HTTPBinEndpoints.dictionary(request, HTTPBinEndpoints.getFields)),
            headers: ["Last-Modified": httpDate(Date()), "ETag": etag]
        )
    }

    /// `/cache/{n}`: the `/get` dictionary with `Cache-Control: public, max-age=n`.
    static func cacheControl(_ request: ServerRequest, seconds: String) -> ServerReply {
        guard let seconds = Int(seconds), seconds >= 0 else { return .notFound }
        return .json(
            .object(HTTPBinEndpoints.dictionary(request, HTTPBinEndpoints.getFields)),
            headers: ["Cache-Control": "public, max-age=\(seconds)"]
        )
    }

    /// `/etag/{etag}`: 304 when `If-None-Match` lists the tag (or `*`), 412 when `If-Match`
    /// is present and lists neither, else the `/get` dictionary; the tag is sent quoted in `ETag`.
    static func etag(_ request: ServerRequest, tag: String) -> ServerReply {
        let quoted = "\"\(tag)\""
        let ifNoneMatch = entityTags(request.headers["if-none-match"])
        let ifMatch = entityTags(request.headers["if-match"])
        if !ifNoneMatch.isEmpty {
            if ifNoneMatch.contains(tag) || ifNoneMatch.contains("*") {
                return .empty(.notModified, headers: ["ETag": quoted])
            }
        } else if !ifMatch.isEmpty, !ifMatch.contains(tag), !ifMatch.contains("*") {
            return .empty(.preconditionFailed)
        }
        return .json(.object(HTTPBinEndpoints.dictionary(request, HTTPBinEndpoints.getFields)), headers: ["ETag": quoted])
    }

    /// The tags of `If-Match`/`If-None-Match` values without quotes or `W/`.
    static func entityTags(_ values: [String]) -> Set<String> {
        var tags = Set<String>()
        for value in values {
            for item in value.split(separator: ",") {
                var tag = item.trimmingASCIIWhitespace()
                if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
                if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
                if !tag.isEmpty { tags.insert(tag) }
            }
        }
        return tags
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
