public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

/// AFNetworking's `AFHTTPRequestSerializer`: query strings for GET, HEAD and DELETE, URL-encoded
/// form bodies for everything else, default headers and request properties.
///
/// Defaults: headers `Accept-Language` (the process's preferred languages, AFN's q-values)
/// and `User-Agent` (`Executable/Version (Linux; <OS version>)`, ASCII only); URI methods
/// GET, HEAD and DELETE; UTF-8. The six request properties (``allowsCellularAccess``,
/// ``cachePolicy``, ``httpShouldHandleCookies``, ``httpShouldUsePipelining``,
/// ``networkServiceType``, ``timeoutInterval``) are copied into requests **only once set**;
/// until then requests keep `URLRequest`'s and the session's defaults.
///
/// Thread safety: all configuration lives behind a mutex, so the serializer may be configured
/// from one thread while others build requests; each request sees a consistent snapshot.
public final class HTTPRequestSerializer: RequestSerializer {
    struct State {
        var headers: [(name: String, value: String)]
        var methodsInURI: Set<String> = ["GET", "HEAD", "DELETE"]
        var queryStringSerialization: (@Sendable (URLRequest, Parameters) throws -> String)?
        var stringEncoding: String.Encoding = .utf8
        var allowsCellularAccess: Bool?
        var cachePolicy: URLRequest.CachePolicy?
        var httpShouldHandleCookies: Bool?
        var httpShouldUsePipelining: Bool?
        var networkServiceType: URLRequest.NetworkServiceType?
        var timeoutInterval: TimeInterval?

        func index(of field: String) -> Int? {
            headers.firstIndex { $0.name.caseInsensitiveCompare(field) == .orderedSame }
        }

        /// Whether `request`'s method puts parameters in the query (a missing method is GET).
        func encodesParametersInURI(_ request: URLRequest) -> Bool {
            methodsInURI.contains((request.httpMethod ?? "GET").uppercased())
        }
    }

    private let state: Mutex<State>

    /// Creates a serializer with the default headers and settings described above.
    public init() {
        state = Mutex(
            State(headers: [
                ("Accept-Language", DefaultHeaders.processAcceptLanguage),
                ("User-Agent", DefaultHeaders.processUserAgent),
            ]))
    }

    /// A consistent copy of the configuration, for one request.
    var snapshot: State { state.withLock { $0 } }

    // MARK: - Headers

    /// Sets a default header (`nil` removes it). Names compare case-insensitively; a new
    /// value replaces the old one in place. Default headers never override a header that the
    /// request being serialized already has.
    public func setValue(_ value: String?, forHTTPHeaderField field: String) {
        state.withLock { state in
            let index = state.index(of: field)
            switch (value, index) {
            case (let value?, let index?): state.headers[index] = (field, value)
            case (let value?, nil): state.headers.append((field, value))
            case (nil, let index?): state.headers.remove(at: index)
            case (nil, nil): break
            }
        }
    }

    /// The default header named `field` (case-insensitive), or nil.
    public func value(forHTTPHeaderField field: String) -> String? {
        state.withLock { state in state.index(of: field).map { state.headers[$0].value } }
    }

    /// All default headers (AFN's `HTTPRequestHeaders`).
    public var httpRequestHeaders: [String: String] {
        state.withLock { state in
            Dictionary(state.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
        }
    }

    /// Sets `Authorization: Basic base64(utf8("username:password"))` as a default header.
    public func setAuthorizationHeader(username: String, password: String) {
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
    }

    /// Removes the default `Authorization` header.
    public func clearAuthorizationHeader() {
        setValue(nil, forHTTPHeaderField: "Authorization")
    }

    // MARK: - Encoding settings

    /// Methods whose parameters go into the URL's query rather than the body; compared with
    /// the uppercased method. Default `["GET", "HEAD", "DELETE"]`.
    public var httpMethodsEncodingParametersInURI: Set<String> {
        get { state.withLock { $0.methodsInURI } }
        set { state.withLock { $0.methodsInURI = Set(newValue.map { $0.uppercased() }) } }
    }

    /// A custom query-string builder used instead of ``queryString(from:)``; nil (the default)
    /// restores the standard encoding (AFN's `setQueryStringSerializationWithStyle:`). An
    /// error it throws aborts serialization and is rethrown unchanged, whatever its type (as
    /// AFNetworking returns the block's error), so `catch MyError.boom` works.
    /// Called on the thread building the request.
    public var queryStringSerialization: (@Sendable (URLRequest, Parameters) throws -> String)? {
        get { state.withLock { $0.queryStringSerialization } }
        set { state.withLock { $0.queryStringSerialization = newValue } }
    }

    /// The encoding of form bodies and multipart parameter values. Default UTF-8.
    public var stringEncoding: String.Encoding {
        get { state.withLock { $0.stringEncoding } }
        set { state.withLock { $0.stringEncoding = newValue } }
    }

    // MARK: - Request properties (applied only once set)

    /// Copied to requests once set. Reads `true` while unset.
    public var allowsCellularAccess: Bool {
        get { state.withLock { $0.allowsCellularAccess ?? true } }
        set { state.withLock { $0.allowsCellularAccess = newValue } }
    }

    /// Copied to requests once set. Reads `.useProtocolCachePolicy` while unset.
    public var cachePolicy: URLRequest.CachePolicy {
        get { state.withLock { $0.cachePolicy ?? .useProtocolCachePolicy } }
        set { state.withLock { $0.cachePolicy = newValue } }
    }

    /// Copied to requests once set. Reads `true` while unset.
    public var httpShouldHandleCookies: Bool {
        get { state.withLock { $0.httpShouldHandleCookies ?? true } }
        set { state.withLock { $0.httpShouldHandleCookies = newValue } }
    }

    /// Copied to requests once set. Reads `false` while unset.
    public var httpShouldUsePipelining: Bool {
        get { state.withLock { $0.httpShouldUsePipelining ?? false } }
        set { state.withLock { $0.httpShouldUsePipelining = newValue } }
    }

    /// Copied to requests once set. Reads `.default` while unset.
    public var networkServiceType: URLRequest.NetworkServiceType {
        get { state.withLock { $0.networkServiceType ?? .default } }
        set { state.withLock { $0.networkServiceType = newValue } }
    }

    /// Copied to requests once set. Reads `60` while unset.
    public var timeoutInterval: TimeInterval {
        get { state.withLock { $0.timeoutInterval ?? 60 } }
        set { state.withLock { $0.timeoutInterval = newValue } }
    }

    // MARK: - Building requests

    /// Builds a request: parses `urlString`, sets `method`, applies the request properties
    /// that were set, then ``serialize(_:parameters:)``.
    /// - Throws: ``CourierError/RequestSerializationReason/invalidURL(_:)`` when `urlString`
    ///   is not a URL; whatever ``serialize(_:parameters:)`` throws.
    public func request(method: String, urlString: String, parameters: Parameters?) throws -> URLRequest {
        try serialize(makeRequest(method: method, urlString: urlString), parameters: parameters)
    }

    /// Adds the default headers the request lacks, then encodes `parameters`: into the query
    /// for ``httpMethodsEncodingParametersInURI`` (`?q`, or `&q` when the URL has a query,
    /// and only when the query is non-empty), otherwise into a form body with
    /// `Content-Type: application/x-www-form-urlencoded` (no charset) unless the request has a
    /// Content-Type. nil parameters on a body method give an empty body (AFN #2864).
    /// - Throws: the custom query closure's error; ``CourierError/RequestSerializationReason/stringEncodingFailed(_:)``.
    public func serialize(_ request: URLRequest, parameters: Parameters?) throws -> URLRequest {
        try serialize(request, parameters: parameters, state: snapshot)
    }

    /// ``serialize(_:parameters:)`` against one snapshot, so a wrapper that already took one
    /// sees the same configuration throughout.
    func serialize(_ request: URLRequest, parameters: Parameters?, state: State) throws -> URLRequest {
        var request = request
        Self.applyDefaultHeaders(state.headers, to: &request)
        let query = try Self.query(for: request, parameters: parameters, state: state)
        if state.encodesParametersInURI(request) {
            if let query, !query.isEmpty, let url = request.url {
                request.url = Self.appendingQuery(query, to: url)
            }
            return request
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        guard let body = (query ?? "").data(using: state.stringEncoding) else {
            throw CourierError.requestSerializationFailed(.stringEncodingFailed(state.stringEncoding))
        }
        request.httpBody = body
        return request
    }

    /// The shape shared by the serializers that write their own body (JSON, property list):
    /// methods in ``httpMethodsEncodingParametersInURI`` get the standard query encoding of
    /// `queryParameters()`; every other method gets the default headers and, **only when
    /// `body()` returns data**, that body with `Content-Type: contentType` unless the request
    /// already has one.
    func serialize(
        _ request: URLRequest,
        queryParameters: () throws -> Parameters?,
        contentType: String,
        body: () throws -> Data?
    ) throws -> URLRequest {
        let state = snapshot
        if state.encodesParametersInURI(request) {
            return try serialize(request, parameters: queryParameters(), state: state)
        }
        var request = request
        Self.applyDefaultHeaders(state.headers, to: &request)
        guard let body = try body() else { return request }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        request.httpBody = body
        return request
    }

    // MARK: - Shared steps

    /// Step 1 with the current configuration.
    func makeRequest(method: String, urlString: String) throws -> URLRequest {
        try makeRequest(method: method, urlString: urlString, state: snapshot)
    }

    /// Step 1 of AFN's request building.
    func makeRequest(method: String, urlString: String, state: State) throws -> URLRequest {
        guard let url = URL(string: urlString) else {
            throw CourierError.requestSerializationFailed(.invalidURL(urlString))
        }
        var request = URLRequest(url: url)
        // A new request's method is GET already; corelibs' setter costs ~0.3–1 µs (it
        // normalizes the name), on every request of the typed verbs.
        if method != "GET" { request.httpMethod = method }
        if let value = state.allowsCellularAccess { request.allowsCellularAccess = value }
        if let value = state.cachePolicy { request.cachePolicy = value }
        if let value = state.httpShouldHandleCookies { request.httpShouldHandleCookies = value }
        if let value = state.httpShouldUsePipelining { Self.setPipelining(value, on: &request) }
        if let value = state.networkServiceType { request.networkServiceType = value }
        if let value = state.timeoutInterval { request.timeoutInterval = value }
        return request
    }

    /// `httpShouldUsePipelining` is deprecated in corelibs Foundation; setting it through a
    /// protocol requirement keeps AFN's property without a deprecation warning.
    private static func setPipelining<R: PipeliningConfigurable>(_ value: Bool, on request: inout R) {
        request.httpShouldUsePipelining = value
    }

    /// Step 2: default headers only where the request has none of that name.
    static func applyDefaultHeaders(_ headers: [(name: String, value: String)], to request: inout URLRequest) {
        for header in headers where request.value(forHTTPHeaderField: header.name) == nil {
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
    }

    /// Step 3: the custom closure, else the standard encoding; nil parameters give nil.
    static func query(for request: URLRequest, parameters: Parameters?, state: State) throws -> String? {
        guard let parameters else { return nil }
        guard let custom = state.queryStringSerialization else { return queryString(from: parameters) }
        // The closure's own error, unchanged (AFNetworking returns the block's NSError as is).
        return try custom(request, parameters)
    }

    /// Step 4a: `?query`, or `&query` when the URL already has one; a fragment stays last.
    static func appendingQuery(_ query: String, to url: URL) -> URL {
        var string = url.absoluteString
        var fragment = ""
        if let hash = string.firstIndex(of: "#") {
            fragment = String(string[hash...])
            string = String(string[..<hash])
        }
        let separator = url.query != nil ? "&" : "?"
        return URL(string: string + separator + query + fragment) ?? url
    }
}

/// Lets ``HTTPRequestSerializer`` set `URLRequest.httpShouldUsePipelining` without calling
/// the deprecated setter directly.
protocol PipeliningConfigurable {
    var httpShouldUsePipelining: Bool { get set }
}

extension URLRequest: PipeliningConfigurable {}
