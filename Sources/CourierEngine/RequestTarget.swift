import Foundation

/// Where a request goes, read from a URL without re-encoding anything.
///
/// Foundation's `URL` accessors decode percent escapes (`path`) or normalise; a client must send
/// the path and query exactly as the caller wrote them, so the target is cut out of the URL's
/// string form instead.
struct RequestTarget: Sendable, Hashable {
    enum Scheme: String, Sendable, Hashable {
        case http
        case https

        var defaultPort: Int { self == .http ? 80 : 443 }
    }

    let scheme: Scheme
    /// The host without brackets (`::1`, not `[::1]`).
    let host: String
    let port: Int
    /// `path?query`, never empty (at least `/`), fragment removed.
    let target: String
    /// Value for the `Host` header (`host`, `host:port`, `[::1]:port`).
    let hostHeader: String

    /// Whether `host` is an IPv4 or IPv6 literal (no SNI, no DNS).
    var hostIsIPAddress: Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
    }

    init(url: URL) throws(EngineError) {
        try self.init(string: url.absoluteString)
    }

    init(string: String) throws(EngineError) {
        guard let schemeEnd = string.range(of: "://") else {
            throw .invalidURL(string)
        }
        let schemeText = string[..<schemeEnd.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: schemeText) else {
            if schemeText.isEmpty { throw .invalidURL(string) }
            throw .unsupportedScheme(schemeText)
        }
        var rest = string[schemeEnd.upperBound...]
        if let hash = rest.firstIndex(of: "#") {
            rest = rest[..<hash]
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty {
            target = "/"
        } else if target.first == "?" {
            target = "/" + target
        }
        if let at = authority.lastIndex(of: "@") {
            authority = authority[authority.index(after: at)...]
        }
        var host: Substring
        var portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL(string) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let afterClose = authority[authority.index(after: close)...]
            if afterClose.first == ":" {
                portText = afterClose.dropFirst()
            } else if !afterClose.isEmpty {
                throw .invalidURL(string)
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw .invalidURL(string) }
        var port = scheme.defaultPort
        if let portText, !portText.isEmpty {
            guard let parsed = Int(portText), (1...65535).contains(parsed) else { throw .invalidURL(string) }
            port = parsed
        }
        if target.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
            throw .invalidURL(string)
        }
        let hostString = String(host)
        self.scheme = scheme
        self.host = hostString
        self.port = port
        self.target = target
        let bracketed = hostString.contains(":") ? "[\(hostString)]" : hostString
        self.hostHeader = port == scheme.defaultPort ? bracketed : "\(bracketed):\(port)"
    }
}
