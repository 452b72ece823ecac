public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// How a redirect changes a request, as pure functions (RFC 9110 §15.4 and browsers' practice).
///
/// - 301, 302 and 303 turn any method but GET and HEAD into GET without a body (303 turns
///   HEAD into HEAD too);
/// - 307 and 308 keep the method and the body;
/// - the credentials set on the request, ``crossOriginSensitiveHeaders`` (`Authorization`,
///   `Proxy-Authorization`, `Cookie`), are dropped when the redirect leaves the origin
///   (scheme, host, port); the engine's own proxy credentials are not request headers and
///   are unaffected.
public enum RedirectRule {
    /// Status codes that are redirects the session follows.
    public static let redirectStatusCodes: Set<Int> = [301, 302, 303, 307, 308]

    /// The request to send for a redirect of `request` to `location` with `statusCode`, or nil
    /// when `location` is not a usable URL (relative locations resolve against `request`'s URL).
    public static func redirectedRequest(from request: URLRequest, statusCode: Int, location: String) -> URLRequest? {
        guard let base = request.url, let target = URL(string: location, relativeTo: base)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        var redirected = request
        redirected.url = target
        let method = request.httpMethod ?? "GET"
        switch statusCode {
        case 301, 302, 303:
            if method != "GET" && method != "HEAD" {
                redirected.httpMethod = "GET"
                redirected.httpBody = nil
                redirected.httpBodyStream = nil
                for header in ["Content-Type", "Content-Length", "Transfer-Encoding"] {
                    redirected.setValue(nil, forHTTPHeaderField: header)
                }
            }
        default:
            break
        }
        if !sameOrigin(base, target) {
            for header in crossOriginSensitiveHeaders {
                redirected.setValue(nil, forHTTPHeaderField: header)
            }
        }
        return redirected
    }

    /// The request the session follows a response with: `statusCode` is one of
    /// ``redirectStatusCodes``, `location` (the `Location` field) is a usable URL, and redirects
    /// are allowed at all (`maximumRedirects` > 0; the count is the task's to keep). Nil:
    /// the response is delivered as it is.
    /// - Throws: ``CourierError/unfollowableRedirect(url:location:)`` for a redirect the session
    ///   would follow to a scheme it never goes to (``isUnfollowable(from:statusCode:location:maximumRedirects:)``).
    static func followed(
        from request: URLRequest, statusCode: Int, location: String?, maximumRedirects: Int
    ) throws(CourierError) -> URLRequest? {
        guard redirectStatusCodes.contains(statusCode), let location, maximumRedirects > 0 else { return nil }
        if isUnfollowable(from: request, statusCode: statusCode, location: location, maximumRedirects: maximumRedirects) {
            throw .unfollowableRedirect(url: request.url, location: location)
        }
        return redirectedRequest(from: request, statusCode: statusCode, location: location)
    }

    /// Whether a response the session would follow (a redirect status, redirects allowed)
    /// points somewhere it never goes: a `Location` that resolves to a URL whose scheme is not
    /// http or https. Such a redirect fails the task
    /// (``CourierError/unfollowableRedirect(url:location:)``) instead of being delivered as if
    /// it were the answer. A `Location` that is no URL at all is delivered as before.
    public static func isUnfollowable(from request: URLRequest, statusCode: Int, location: String?, maximumRedirects: Int) -> Bool {
        guard redirectStatusCodes.contains(statusCode), let location, maximumRedirects > 0, let base = request.url,
            let scheme = URL(string: location, relativeTo: base)?.absoluteURL.scheme?.lowercased()
        else { return false }
        return scheme != "http" && scheme != "https"
    }

    /// The headers a redirect to another origin drops: they carry credentials
    /// (`Authorization`, `Proxy-Authorization`, `Cookie`, in that published order; names
    /// compared case-insensitively): `CredentialHeaders.requestFields` (whose own order is the
    /// image key's digest order; `CredentialHeadersTests` checks the two hold the same names).
    /// Other fields, custom token fields included, are kept, as browsers and curl keep them.
    public static let crossOriginSensitiveHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// Whether two URLs share scheme, host and port.
    public static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            return (scheme, url.host?.lowercased() ?? "", port)
        }
        return origin(lhs) == origin(rhs)
    }
}
