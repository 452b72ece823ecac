import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import NIOHTTP1

/// The one place a response head from the engine becomes something else: the Foundation
/// `HTTPURLResponse` AFNetworking's signatures hand out, and the values the session reads
/// straight from the head (so the hot path never needs the Foundation object).
///
/// `HTTPURLResponse.init(url:statusCode:httpVersion:headerFields:)` costs ~3.5 µs per header
/// field on Linux (it canonicalises every name); the session makes one only when a caller or
/// a hook asks for it, and at most once per task (see ``SessionTask/response``).
enum ResponseHeadBridge {
    /// The `HTTPURLResponse` for `head` received from `url`: repeated fields joined with
    /// `", "` in arrival order, the head's HTTP version. Nil only when Foundation refuses it.
    static func makeResponse(_ head: HTTPResponseHead, url: URL) -> HTTPURLResponse? {
        var fields: [String: String] = [:]
        for (name, value) in head.headers {
            if let existing = fields[name] {
                fields[name] = existing + ", " + value
            } else {
                fields[name] = value
            }
        }
        let version = "HTTP/\(head.version.major).\(head.version.minor)"
        return HTTPURLResponse(url: url, statusCode: Int(head.status.code), httpVersion: version, headerFields: fields)
    }

    /// The body length `Content-Length` announces, or -1 when it is absent or not a number
    /// (what `HTTPURLResponse.expectedContentLength` reports).
    static func expectedLength(of head: HTTPResponseHead) -> Int64 {
        head.headers.first(name: "content-length").flatMap { Int64($0) } ?? -1
    }

    /// `head` as swift-http-types' `HTTPResponse`: the status with its reason phrase and every
    /// field in arrival order (repeated fields stay separate). A field name swift-http-types
    /// refuses is left out (the engine's parser already admits only tokens).
    /// - Throws: ``CourierError/connectionLost(url:reason:)`` for a status outside 0...999.
    static func httpResponse(_ head: HTTPResponseHead, url: URL?) throws -> HTTPResponse {
        let code = Int(head.status.code)
        guard (0...999).contains(code) else {
            throw CourierError.connectionLost(url: url, reason: "the response status \(code) is not a three-digit code")
        }
        var fields = HTTPFields()
        fields.reserveCapacity(head.headers.count)
        for (name, value) in head.headers {
            guard let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return HTTPResponse(status: HTTPResponse.Status(code: code, reasonPhrase: head.status.reasonPhrase), headerFields: fields)
    }

    /// The media type of `head`'s `Content-Type`, lowercased, without parameters (what
    /// `HTTPURLResponse.mimeType` gives), or nil without one.
    static func mimeType(of head: HTTPResponseHead) -> String? {
        guard let contentType = head.headers.first(name: "content-type") else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The session's request for a swift-http-types request: `scheme://authority` plus the
    /// path (with its query), the method, every field in order (repeated names joined with
    /// `","` by `URLRequest`) and `body` as the body.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` with `invalidURL` when the
    ///   request has no scheme or authority, or they do not make a URL.
    static func urlRequest(from request: HTTPRequest, body: Data?) throws -> URLRequest {
        let path = request.path ?? "/"
        guard let scheme = request.scheme, let authority = request.authority,
            let url = URL(string: "\(scheme)://\(authority)\(path.hasPrefix("/") ? path : "/" + path)")
        else {
            let text = "\(request.scheme ?? "")://\(request.authority ?? "")\(path)"
            throw CourierError.requestSerializationFailed(.invalidURL(text))
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        urlRequest.httpBody = body
        return urlRequest
    }
}
