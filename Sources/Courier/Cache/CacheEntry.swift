import Foundation
import NIOHTTP1

/// What the cache keeps about one stored response besides its body: the head, the request
/// values it varies on, and the times RFC 9111's age calculation needs. Encoded as JSON in the
/// disk store's entry files. Pure value; no I/O.
struct CacheEntry: Sendable, Equatable, Codable {
    /// The primary key (``CacheKey``): the request URL without its fragment.
    var key: String
    /// The response's status code.
    var status: Int
    /// The response's reason phrase.
    var reason: String
    /// The response's header fields, in order, as name/value pairs.
    var headerFields: [[String]]
    /// The secondary key (``CacheVary``): each `Vary` field name (lowercased) and the
    /// request's value of it then (nil: the request had none).
    var varied: [String: String?]
    /// When the request that produced this response was sent (`request_time`, §4.2.3).
    var requestTime: Date
    /// When the response was received (`response_time`).
    var responseTime: Date
    /// The body's length in bytes.
    var bodyLength: Int64
    /// Names the disk store's body file for this entry (a new one for each new body).
    var bodyID: String

    /// The header fields as `HTTPHeaders`.
    var headers: HTTPHeaders {
        get { HTTPHeaders(headerFields.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }) }
        set { headerFields = newValue.map { [$0.name, $0.value] } }
    }

    /// The response head to deliver for this entry.
    var responseHead: HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status, reasonPhrase: reason), headers: headers)
    }

    /// The combined `Cache-Control` of the stored response.
    var cacheControl: CacheControl { CacheControl(headers["cache-control"]) }
}
