import Foundation
import NIOHTTP1

/// Invalidation after an unsafe method (RFC 9111 §4.4). Pure; no I/O.
enum CacheInvalidation {
    /// Methods that don't change the resource; every other method invalidates.
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// The primary keys to remove after `method` to `url` got `status` with `responseHeaders`:
    /// none for a safe method or an error/informational status; otherwise the URL, plus the
    /// `Location` and `Content-Location` URLs (resolved against it) when same-origin.
    static func keysToInvalidate(method: String, url: URL?, status: Int, responseHeaders: HTTPHeaders) -> [String] {
        guard !safeMethods.contains(method.uppercased()), (200...399).contains(status), let url else { return [] }
        var keys: [String] = []
        if let key = CacheKey.key(for: url) { keys.append(key) }
        let origin = CacheKey.origin(of: url)
        for name in ["location", "content-location"] {
            guard let value = responseHeaders.first(name: name), let target = URL(string: value, relativeTo: url)?.absoluteURL,
                CacheKey.origin(of: target) == origin, let key = CacheKey.key(for: target), !keys.contains(key)
            else { continue }
            keys.append(key)
        }
        return keys
    }
}
