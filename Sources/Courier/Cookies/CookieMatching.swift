import Foundation

/// The parts of a request URL the cookie rules look at.
struct CookieRequestTarget: Equatable, Sendable {
    /// Canonical host: lowercase, no trailing dot, IPv6 without brackets, Unicode labels as
    /// Punycode.
    var host: String
    /// The path as sent (percent-encoded), `/` when empty.
    var path: String
    /// `https` or `wss`.
    var isSecure: Bool

    /// Nil for a URL without a host.
    init?(_ url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let host = components.host.flatMap(CookieMatching.canonicalHost)
        else { return nil }
        self.host = host
        self.path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let scheme = components.scheme?.lowercased()
        self.isSecure = scheme == "https" || scheme == "wss"
    }

    init(host: String, path: String, isSecure: Bool) {
        self.host = host
        self.path = path
        self.isSecure = isSecure
    }
}

/// RFC 6265bis §5.1.3–5.1.4: domain matching, path matching and the default path. Pure.
enum CookieMatching {
    /// Lowercase, trailing dot removed, `[v6]` unbracketed, Unicode labels in Punycode; nil when
    /// empty or not encodable.
    static func canonicalHost(_ host: String) -> String? {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        guard !host.isEmpty else { return nil }
        return Punycode.asciiHost(host)
    }

    /// An IPv6 literal (has a colon) or an IPv4 address in any form the URL standard accepts
    /// (the last label is a number: decimal, `0x` hex or octal), so `10.1.2.3`, `0x7f.1` and
    /// `2130706433` all count.
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        guard let last = host.split(separator: ".", omittingEmptySubsequences: true).last else { return false }
        if last.allSatisfy(\.isASCIIDigitCharacter) { return true }
        let lower = last.lowercased()
        return lower.hasPrefix("0x") && lower.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    /// `host` domain-matches `domain`: they are equal, or `host` ends with `.domain` and is a
    /// host name, not an IP address.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        guard host.hasSuffix(domain), !isIPAddress(host) else { return false }
        let boundary = host.utf8.dropLast(domain.utf8.count)
        return boundary.last == UInt8(ascii: ".")
    }

    /// `requestPath` path-matches `cookiePath`: equal, or `cookiePath` is a prefix that ends with
    /// `/` or is followed by `/` in `requestPath`.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.utf8.dropFirst(cookiePath.utf8.count).first == UInt8(ascii: "/")
    }

    /// The default path of a request path: up to, not including, its last `/`; `/` when that
    /// leaves nothing or the path doesn't start with `/`.
    static func defaultPath(_ requestPath: String) -> String {
        guard requestPath.hasPrefix("/"), let lastSlash = requestPath.lastIndex(of: "/"),
            lastSlash != requestPath.startIndex
        else { return "/" }
        return String(requestPath[..<lastSlash])
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
