import Courier
public import Foundation
public import HTTPTypes

/// Where an OpenAPI operation's request goes: the generated client hands the transport a
/// request whose `path` is the operation's (with its query) and the server's URL apart; this
/// puts them together into the absolute request the session sends. Pure logic, no I/O.
public enum OpenAPIRequestTarget {
    /// `request` aimed at `baseURL`: its scheme and authority (`host[:port]`, with any user
    /// info) become the request's, and the base URL's path is put before the operation's path
    /// (one `/` between them, whether or not the base URL ends with one). The base URL's query
    /// and fragment are dropped (an operation's path carries its own query). Method and header
    /// fields are kept as they are.
    ///
    /// ```swift
    /// let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/pets?limit=2")
    /// let target = try OpenAPIRequestTarget.request(request, baseURL: URL(string: "https://api.example.com/v1/")!)
    /// // https://api.example.com/v1/pets?limit=2
    /// ```
    /// - Throws: ``Courier/CourierError/requestSerializationFailed(_:)`` with `invalidURL`
    ///   (naming the base URL) when `baseURL` has no scheme or host.
    public static func request(_ request: HTTPRequest, baseURL: URL) throws -> HTTPRequest {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
            let scheme = components.scheme, !scheme.isEmpty,
            let host = components.percentEncodedHost, !host.isEmpty
        else {
            throw CourierError.requestSerializationFailed(.invalidURL(baseURL.absoluteString))
        }
        let basePath = components.percentEncodedPath
        components.percentEncodedPath = ""
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        guard let origin = components.string, origin.hasPrefix(scheme + "://") else {
            throw CourierError.requestSerializationFailed(.invalidURL(baseURL.absoluteString))
        }
        var target = request
        target.scheme = scheme
        target.authority = String(origin.dropFirst(scheme.count + 3))
        target.path = joined(basePath: basePath, operationPath: request.path ?? "/")
        return target
    }

    /// `basePath` and `operationPath` with exactly one `/` where they meet.
    static func joined(basePath: String, operationPath: String) -> String {
        let base = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
        if operationPath.isEmpty { return base.isEmpty ? "/" : base }
        if operationPath.hasPrefix("/") { return base + operationPath }
        // A query alone ("?a=1") stays on the base path; anything else is a path segment.
        if operationPath.hasPrefix("?") { return (base.isEmpty ? "/" : base) + operationPath }
        return base + "/" + operationPath
    }
}
