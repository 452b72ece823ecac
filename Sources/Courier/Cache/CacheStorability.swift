import Foundation
import NIOHTTP1

/// Whether a response may be stored by a private cache (RFC 9111 §3). Pure; no I/O.
enum CacheStorability {
    /// Status codes cacheable by default ("heuristically cacheable", RFC 9110 §15.1), less
    /// 206: partial responses are not stored.
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Whether the response to a request may be stored.
    /// - Parameters:
    ///   - method: the request method (only GET is stored).
    ///   - requestHeaders: the request's header fields as sent.
    ///   - status: the final response's status code.
    ///   - responseHeaders: the response's header fields.
    static func isStorable(method: String, requestHeaders: HTTPHeaders, status: Int, responseHeaders: HTTPHeaders) -> Bool {
        guard method.uppercased() == "GET" else { return false }
        // Final responses the cache understands; no partial content, no Range requests.
        guard (200...599).contains(status), status != 206, status != 304 else { return false }
        // A challenge (401, 407) answers the credentials the request carried: stored, it would
        // answer the next request for the URL, the one carrying new credentials (the session's
        // answer to the challenge, a refreshed token), which must reach the server.
        guard status != 401, status != 407 else { return false }
        guard !requestHeaders.contains(name: "range") else { return false }
        let requestControl = CacheControl(requestHeaders["cache-control"])
        let responseControl = CacheControl(responseHeaders["cache-control"])
        if requestControl.noStore || responseControl.noStore { return false }
        // `Vary: *` never matches a later request: storing it would only waste space.
        if CacheVary.fieldNames(in: responseHeaders).contains("*") { return false }
        // §3.5: a request with Authorization only when the response explicitly allows it.
        if requestHeaders.contains(name: "authorization"),
            !(responseControl.mustRevalidate || responseControl.isPublic || responseControl.has("s-maxage"))
        {
            return false
        }
        // §3: explicit freshness, `public`, or a status cacheable by default (`private` is fine
        // for a private cache; `no-cache` entries are stored and always validated).
        return responseHeaders.contains(name: "expires") || responseControl.maxAge != nil
            || responseControl.isPublic || responseControl.isPrivate
            || heuristicallyCacheable.contains(status)
    }
}
