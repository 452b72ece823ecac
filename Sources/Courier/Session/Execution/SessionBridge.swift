public import CourierEngine
public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import NIOCore
import NIOHTTP1

/// The one place the session's types and the engine's meet; every conversion lives here:
/// - requests: a `URLRequest` (plus the configuration's extra headers, the jar's cookies and
///   the timeouts) becomes the engine's ``CourierEngine/EngineRequest``; a swift-http-types
///   `HTTPRequest` becomes a `URLRequest`;
/// - responses: the engine's head becomes the Foundation `HTTPURLResponse` AFNetworking's
///   signatures hand out (lazily, see ``SessionTask/response``), a swift-http-types
///   `HTTPResponse`, or the values the session reads straight from the head (so the hot path
///   never needs the Foundation object);
/// - errors: an ``CourierEngine/EngineError`` becomes a ``CourierError``
///   (``CourierError/init(_:url:)``, below), and an engine that can't be made from the
///   configuration becomes ``CourierError/invalidTLSConfiguration(reason:)``.
///
/// `HTTPURLResponse.init(url:statusCode:httpVersion:headerFields:)` costs ~3.5 µs per header
/// field on Linux (it canonicalises every name); the session makes one only when a caller or
/// a hook asks for it, and at most once per task.
enum SessionBridge {
    // MARK: - Requests

    /// The engine's request for `request`: its fields, then the configuration's
    /// `httpAdditionalHeaders` it does not set, then the jar's `Cookie` (when the request
    /// handles cookies and sets none); the idle timeout is the request's `timeoutInterval`
    /// unless it kept URLRequest's default 60 s (then the configuration's
    /// `timeoutIntervalForRequest`), the deadline the task's (``TaskDeadline``, fixed when the
    /// task started: every hop shares it), or when none is given the configuration's
    /// `timeoutIntervalForResource` from now.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` when the request has no URL.
    static func engineRequest(
        for request: URLRequest, body: RequestBody?, environment: TaskEnvironment, deadline: TaskDeadline? = nil
    ) throws -> EngineRequest {
        // Each field read through the environment: a `SessionConfiguration` argument was copied
        // whole (every array, dictionary and string retained and released) on each request.
        guard let url = request.url else {
            throw CourierError.requestSerializationFailed(.invalidURL(""))
        }
        let fields = request.allHTTPHeaderFields ?? [:]
        var headers = HTTPHeaders()
        let capacity = fields.count + environment.configuration.httpAdditionalHeaders.count
        if capacity > 0 { headers.reserveCapacity(capacity + 1) }  // one allocation, no growth (+1: a cookie)
        for (name, value) in fields {
            headers.add(name: name, value: value)
        }
        for (name, value) in environment.configuration.httpAdditionalHeaders where !headers.contains(name: name) {
            headers.add(name: name, value: value)
        }
        if let jar = environment.configuration.cookieJar, request.httpShouldHandleCookies, !headers.contains(name: "cookie"),
            let cookie = jar.cookieHeader(for: url)
        {
            headers.add(name: "Cookie", value: cookie)
        }
        // `URLRequest.timeoutInterval` defaults to 60 s, so a request that kept the default
        // follows the configuration's `timeoutIntervalForRequest`; any other value wins.
        let requested = request.timeoutInterval
        let idle = requested > 0 && requested != urlRequestDefaultTimeout ? requested : environment.configuration.timeoutIntervalForRequest
        return EngineRequest(
            method: request.httpMethod ?? "GET",
            url: url,
            headers: headers,
            body: body,
            idleTimeout: timeAmount(idle) ?? .zero,  // zero: no idle timeout
            deadline: deadline?.instant
                ?? TaskDeadline(timeout: environment.configuration.timeoutIntervalForResource, start: .now())?.instant
        )
    }

    private static let urlRequestDefaultTimeout: TimeInterval = 60
    /// The longest timeout the engine is given (about 31 years): longer, or infinite, is the same.
    private static let longestTimeout: TimeInterval = 1e9

    /// A caller's timeout in seconds as the engine's: nil for none (not a number), zero or less
    /// as zero, anything longer than ``longestTimeout`` (infinity included) as that.
    static func timeAmount(_ seconds: TimeInterval) -> TimeAmount? {
        guard !seconds.isNaN else { return nil }
        return .nanoseconds(Int64(min(max(seconds, 0), longestTimeout) * 1_000_000_000))
    }

    // MARK: - Errors

    /// The session error for an engine that could not be made from the configuration.
    static func configurationError(_ error: any Error) -> CourierError {
        let prefix = "invalid TLS configuration: "
        if case .tlsHandshakeFailed(let reason) = error as? EngineError {
            return .invalidTLSConfiguration(reason: reason.hasPrefix(prefix) ? String(reason.dropFirst(prefix.count)) : reason)
        }
        return .invalidTLSConfiguration(reason: "\(error)")
    }

    // MARK: - Responses

    /// The `HTTPURLResponse` for `head` received from `url`: repeated fields joined with
    /// `", "` in arrival order, the head's HTTP version. Nil only when Foundation refuses it.
    static func makeResponse(_ head: HTTPResponseHead, url: URL) -> HTTPURLResponse? {
        var fields: [String: String] = [:]
        fields.reserveCapacity(head.headers.count)  // no regrowth (it showed in the profile)
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

    /// What a serializer reads of a final response's `head` (one that came from a URL): its
    /// status, and its `Content-Type` read when asked (``ContentTypeReading/read(in:)``); `response` makes
    /// the `HTTPURLResponse` those values are the same as (for an error, or a `Content-Type`
    /// only Foundation reads exactly).
    static func serializerInput(
        _ head: HTTPResponseHead, response: @escaping @Sendable () -> HTTPURLResponse?
    ) -> SerializerInput {
        SerializerInput(statusCode: Int(head.status.code), fields: head.headers, hasURL: true, response: response)
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
        HTTPResponse(status: try httpStatus(head, url: url), headerFields: httpFields(head))
    }

    /// `head`'s status as swift-http-types' (see ``httpResponse(_:url:)``).
    /// - Throws: ``CourierError/connectionLost(url:reason:)`` for a status outside 0...999.
    static func httpStatus(_ head: HTTPResponseHead, url: URL?) throws -> HTTPResponse.Status {
        let code = Int(head.status.code)
        guard (0...999).contains(code) else {
            throw CourierError.connectionLost(url: url, reason: "the response status \(code) is not a three-digit code")
        }
        return HTTPResponse.Status(code: code, reasonPhrase: head.status.reasonPhrase)
    }

    /// `head`'s fields as swift-http-types' (see ``httpResponse(_:url:)``).
    static func httpFields(_ head: HTTPResponseHead) -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(head.headers.count)
        for (name, value) in head.headers {
            guard let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return fields
    }

    /// The media type of `head`'s `Content-Type`, lowercased, without parameters (what
    /// `HTTPURLResponse.mimeType` gives), or nil without one.
    static func mimeType(of head: HTTPResponseHead) -> String? {
        guard let contentType = head.headers.first(name: "content-type") else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    // MARK: - Requests from swift-http-types

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
        if request.method != .get { urlRequest.httpMethod = request.method.rawValue }  // GET already (the setter is costly)
        for field in request.headerFields {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        urlRequest.httpBody = body
        return urlRequest
    }
}

extension CourierError {
    /// Maps an engine failure onto the matching case; `url` is the request's URL. The session
    /// layer reports every engine failure through this one mapping (it lives with the other
    /// conversions in `SessionBridge`).
    ///
    /// A TLS handshake failure stays ``engine(_:)`` with `EngineError.tlsHandshakeFailed` (what
    /// URLSession calls a secure-connection failure, not a failure to connect).
    public init(_ error: EngineError, url: URL? = nil) {
        switch error {
        case .serverTrustRejected(let host, let reason, let chain):
            let certificates = chain.compactMap { try? Certificate(derBytes: $0) }
            self = .serverTrustRejected(host: host, reason: reason, url: url, chain: certificates)
        case .timedOut(let kind): self = .timedOut(url: url, reason: "\(kind.rawValue) timeout")
        case .cannotConnect(_, _, let reason), .dnsFailure(_, let reason): self = .cannotConnect(url: url, reason: reason)
        case .connectionLost(let reason): self = .connectionLost(url: url, reason: reason)
        case .cancelled: self = .cancelled(url: url)
        default: self = .engine(error)
        }
    }
}

/// The bridge's former name (it held only the response conversions).
typealias ResponseHeadBridge = SessionBridge
