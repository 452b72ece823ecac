public import Foundation

/// AFHTTPSessionManager's base-URL rules (AFN §1.2) as pure functions.
public enum BaseURLResolution {
    /// A base URL with a non-empty path gets a trailing slash (`http://h/v1` → `http://h/v1/`);
    /// one with an empty path (`http://h`) is left as is.
    public static func normalizedBaseURL(_ url: URL) -> URL {
        let string = url.absoluteString
        guard !url.path.isEmpty, !string.hasSuffix("/") else { return url }
        return url.appendingPathComponent("")
    }

    /// `urlString` resolved against `baseURL` by RFC 3986 (`foo` → `…/v1/foo`, `/foo` → host
    /// root, `foo/` → `…/v1/foo/`, an absolute URL replaces the base), or nil when it doesn't
    /// parse.
    public static func resolve(_ urlString: String, against baseURL: URL?) -> URL? {
        // An empty path is the base URL itself, as `NSURL(string: "", relativeTo:)` gives on
        // Apple platforms (Linux's Foundation returns nil there).
        if urlString.isEmpty, let baseURL { return URL(string: baseURL.absoluteString) }
        guard let url = URL(string: urlString, relativeTo: baseURL) else { return nil }
        return URL(string: url.absoluteString)
    }
}
