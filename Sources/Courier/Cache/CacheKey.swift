import Foundation

/// The primary cache key (RFC 9111 §2): the target URI, here the URL's absolute string without
/// its fragment, user and password, with scheme and host lowercased. Only GET responses are stored, so the method
/// is not part of the key. Pure; no I/O.
enum CacheKey {
    /// The key for `url`, or nil when it has no http(s) scheme or no host.
    static func key(for url: URL?) -> String? {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else { return nil }
        components.fragment = nil
        // The user and password are never sent (the session's credential is), and the key is
        // written to disk: they are not part of it.
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        components.scheme = scheme
        components.host = host.lowercased()
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        return components.string
    }

    /// The origin (scheme, host, port) of `url`, for same-origin checks.
    static func origin(of url: URL?) -> String? {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host):\(port)"
    }
}
