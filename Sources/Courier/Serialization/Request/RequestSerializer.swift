public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Turns a method, a URL string and parameters into a `URLRequest`: AFNetworking's
/// `AFURLRequestSerialization`.
///
/// Conforming types are `Sendable` and safe to use from any thread, including while another
/// thread changes their configuration.
public protocol RequestSerializer: Sendable {
    /// Builds a request for `method` and `urlString` and serializes `parameters` into it.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL string or
    ///   parameters that can't be encoded.
    func request(method: String, urlString: String, parameters: Parameters?) throws -> URLRequest

    /// Returns a copy of `request` with the serializer's default headers (only where the
    /// request lacks them) and `parameters` encoded into its URL or body.
    /// - Throws: ``CourierError/requestSerializationFailed(_:)``.
    func serialize(_ request: URLRequest, parameters: Parameters?) throws -> URLRequest
}

/// A request serializer built on an ``HTTPRequestSerializer`` that holds its configuration
/// (headers, URI methods, query-string closure, string encoding, the six request
/// properties). AFNetworking subclasses `AFHTTPRequestSerializer`; a `Sendable` Swift class
/// must be final, so ``JSONRequestSerializer`` and ``PropertyListRequestSerializer`` wrap one
/// and this protocol forwards the whole configuration API to it.
public protocol HTTPRequestSerializerWrapper: RequestSerializer, AnyObject {
    /// The serializer holding the configuration.
    var base: HTTPRequestSerializer { get }
}

extension HTTPRequestSerializerWrapper {
    /// See ``HTTPRequestSerializer/setValue(_:forHTTPHeaderField:)``.
    public func setValue(_ value: String?, forHTTPHeaderField field: String) {
        base.setValue(value, forHTTPHeaderField: field)
    }

    /// See ``HTTPRequestSerializer/value(forHTTPHeaderField:)``.
    public func value(forHTTPHeaderField field: String) -> String? { base.value(forHTTPHeaderField: field) }

    /// See ``HTTPRequestSerializer/httpRequestHeaders``.
    public var httpRequestHeaders: [String: String] { base.httpRequestHeaders }

    /// See ``HTTPRequestSerializer/setAuthorizationHeader(username:password:)``.
    public func setAuthorizationHeader(username: String, password: String) {
        base.setAuthorizationHeader(username: username, password: password)
    }

    /// See ``HTTPRequestSerializer/clearAuthorizationHeader()``.
    public func clearAuthorizationHeader() { base.clearAuthorizationHeader() }

    /// See ``HTTPRequestSerializer/httpMethodsEncodingParametersInURI``.
    public var httpMethodsEncodingParametersInURI: Set<String> {
        get { base.httpMethodsEncodingParametersInURI }
        set { base.httpMethodsEncodingParametersInURI = newValue }
    }

    /// See ``HTTPRequestSerializer/queryStringSerialization``.
    public var queryStringSerialization: (@Sendable (URLRequest, Parameters) throws -> String)? {
        get { base.queryStringSerialization }
        set { base.queryStringSerialization = newValue }
    }

    /// See ``HTTPRequestSerializer/stringEncoding``.
    public var stringEncoding: String.Encoding {
        get { base.stringEncoding }
        set { base.stringEncoding = newValue }
    }

    /// See ``HTTPRequestSerializer/allowsCellularAccess``.
    public var allowsCellularAccess: Bool {
        get { base.allowsCellularAccess }
        set { base.allowsCellularAccess = newValue }
    }

    /// See ``HTTPRequestSerializer/cachePolicy``.
    public var cachePolicy: URLRequest.CachePolicy {
        get { base.cachePolicy }
        set { base.cachePolicy = newValue }
    }

    /// See ``HTTPRequestSerializer/httpShouldHandleCookies``.
    public var httpShouldHandleCookies: Bool {
        get { base.httpShouldHandleCookies }
        set { base.httpShouldHandleCookies = newValue }
    }

    /// See ``HTTPRequestSerializer/httpShouldUsePipelining``.
    public var httpShouldUsePipelining: Bool {
        get { base.httpShouldUsePipelining }
        set { base.httpShouldUsePipelining = newValue }
    }

    /// See ``HTTPRequestSerializer/networkServiceType``.
    public var networkServiceType: URLRequest.NetworkServiceType {
        get { base.networkServiceType }
        set { base.networkServiceType = newValue }
    }

    /// See ``HTTPRequestSerializer/timeoutInterval``.
    public var timeoutInterval: TimeInterval {
        get { base.timeoutInterval }
        set { base.timeoutInterval = newValue }
    }
}
