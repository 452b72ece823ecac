public import Foundation
import NIOHTTP1

/// httpbin's caching endpoints: conditional requests and `Cache-Control`. Public for
/// ``httpDate(_:)`` only (tests write HTTP dates with it).
public enum CacheEndpoints {
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

    /// `/cached/{name…}`: a response whose caching fields come from the query, for cache tests
    /// (any method; the path, query left out, is what `requestsReceived(forPath:)` counts):
    /// `cc` → `Cache-Control`; `etag` → `ETag` (quoted unless already quoted or weak); `lm`,
    /// `date`, `expires` → `Last-Modified`, `Date`, `Expires` at that many seconds from now, or
    /// at that many seconds since 1970 when above 10^9 (`Date` defaults to now); `age` → `Age`; `vary` → `Vary`; `status` → the status;
    /// `location`, `clocation` → `Location`, `Content-Location`; `size` → that many bytes of
    /// padding in the body. The JSON body holds a fresh `id` (so a test tells a stored body from
    /// a new one), the method, and each varied request header's value.
    ///
    /// A GET whose `If-None-Match` lists the `etag`, or whose `If-Modified-Since` is at or after
    /// `lm`, gets `304` with the caching fields, `X-Validated-With` naming the conditional
    /// header that matched and `X-Revalidation-Id` (a fresh id, so merged headers can be seen).
    static func configurable(_ request: ServerRequest) -> ServerReply {
        let now = Date()
        func offsetDate(_ name: String) -> String? {
            // Above 10^9: seconds since 1970 (a date that doesn't move between requests).
            request.queryValue(name).flatMap { Double($0) }.map {
                httpDate($0 > 1_000_000_000 ? Date(timeIntervalSince1970: $0) : now.addingTimeInterval($0))
            }
        }
        var headers: HTTPHeaders = [:]
        if let cc = request.queryValue("cc") { headers.add(name: "Cache-Control", value: cc) }
        var etag = request.queryValue("etag")
        if let tag = etag, !tag.hasPrefix("\""), !tag.hasPrefix("W/") { etag = "\"\(tag)\"" }
        if let etag { headers.add(name: "ETag", value: etag) }
        let lastModified = offsetDate("lm")
        if let lastModified { headers.add(name: "Last-Modified", value: lastModified) }
        headers.add(name: "Date", value: offsetDate("date") ?? httpDate(now))
        if let expires = offsetDate("expires") { headers.add(name: "Expires", value: expires) }
        if let age = request.queryValue("age") { headers.add(name: "Age", value: age) }
        if let vary = request.queryValue("vary") { headers.add(name: "Vary", value: vary) }
        if let location = request.queryValue("location") { headers.add(name: "Location", value: location) }
        if let location = request.queryValue("clocation") { headers.add(name: "Content-Location", value: location) }

        if request.method == .GET || request.method == .HEAD {
            var validatedWith: String?
            if let etag, !request.headers["if-none-match"].isEmpty {
                let listed = entityTags(request.headers["if-none-match"])
                let bare = etag.replacingOccurrences(of: "W/", with: "").replacingOccurrences(of: "\"", with: "")
                if listed.contains(bare) || listed.contains("*") { validatedWith = "If-None-Match" }
            } else if let lastModified, let since = request.headers.first(name: "if-modified-since"),
                let modified = parseHTTPDate(lastModified), let sinceDate = parseHTTPDate(since), modified <= sinceDate
            {
                validatedWith = "If-Modified-Since"
            }
            if let validatedWith {
                headers.add(name: "X-Validated-With", value: validatedWith)
                headers.add(name: "X-Revalidation-Id", value: UUID().uuidString)
                return .empty(.notModified, headers: headers)
            }
        }
        var fields: [String: JSONNode] = [
            "id": .string(UUID().uuidString),
            "method": .string(request.method.rawValue),
        ]
        for name in (request.queryValue("vary") ?? "").split(separator: ",") {
            let name = name.trimmingASCIIWhitespace()
            fields[name.lowercased()] = .string(request.headers[name].joined(separator: ", "))
        }
        if let size = request.queryValue("size").flatMap(Int.init), size > 0, size <= 256 << 20 {
            fields["padding"] = .string(String(repeating: "x", count: size))
        }
        let status = request.queryValue("status").flatMap(Int.init).map { HTTPResponseStatus(statusCode: $0) } ?? .ok
        return .json(.object(fields), status: status, headers: headers)
    }

    /// Parses an IMF-fixdate (what ``httpDate(_:)`` writes).
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), whole seconds, for the endpoints and
    /// for tests that need an HTTP date. Any thread.
    public static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
