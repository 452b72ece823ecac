package import Foundation

/// Where a request goes, read from a URL without re-encoding anything.
///
/// Foundation's `URL` accessors decode percent escapes (`path`) or normalise; a client must send
/// the path and query exactly as the caller wrote them, so the target is cut out of the URL's
/// string form instead.
package struct RequestTarget: Sendable, Hashable {
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
    package let target: String
    /// Value for the `Host` header (`host`, `host:port`, `[::1]:port`).
    package let hostHeader: String
    /// The Unix domain socket the request goes to instead of the network: the decoded host of
    /// an `http+unix://` or `https+unix://` URL (whose ``host`` is then `localhost`), or a
    /// path ``EngineConfiguration/unixSocketPaths`` gives for the host. Nil: TCP.
    var socketPath: String?

    /// Whether `host` is an IPv4 or IPv6 literal (no SNI, no DNS).
    var hostIsIPAddress: Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
    }

    /// The target of `url`, or ``EngineError/invalidURL(_:)`` / ``EngineError/unsupportedScheme(_:)``.
    package init(url: borrowing URL) throws(EngineError) {
        try self.init(string: url.absoluteString)
    }

    init(string: String) throws(EngineError) {
        // Scanned as UTF-8 bytes, in the string's own storage (no array copied per request):
        // Character-level searches cost grapheme breaking on every request (about a tenth of
        // the client's CPU on small GETs before this).
        var contiguous = string
        let parsed = contiguous.withUTF8 { bytes in
            Result { () throws(EngineError) in try RequestTarget(bytes: bytes, string: string) }
        }
        self = try parsed.get()
    }

    /// The target of the URL `string`, whose UTF-8 form is `bytes`.
    private init(bytes: UnsafeBufferPointer<UInt8>, string: String) throws(EngineError) {
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        var schemeEnd: Int?
        if bytes.count >= 3 {
            for index in 0..<(bytes.count - 2)
            where bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/")
                && bytes[index + 2] == UInt8(ascii: "/")
            {
                schemeEnd = index
                break
            }
        }
        guard let schemeEnd else { throw .invalidURL(string) }
        let schemeText = text(0..<schemeEnd).lowercased()
        let restStart = schemeEnd + 3
        let restEnd = bytes[restStart...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
        let authorityEnd =
            bytes[restStart..<restEnd].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? restEnd
        guard let scheme = Scheme(rawValue: schemeText) else {
            if schemeText.isEmpty { throw .invalidURL(string) }
            // `http+unix://%2Fvar%2Frun%2Fdocker.sock/path`: AsyncHTTPClient's spelling.
            guard schemeText.hasSuffix("+unix"), let base = Scheme(rawValue: String(schemeText.dropLast(5))) else {
                throw .unsupportedScheme(schemeText)
            }
            self = try Self(unixScheme: base, encodedPath: text(restStart..<authorityEnd), target: text(authorityEnd..<restEnd), string: string)
            return
        }
        var authorityStart = restStart
        if let at = bytes[restStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) {
            authorityStart = at + 1
        }
        var target = text(authorityEnd..<restEnd)
        if target.isEmpty {
            target = "/"
        } else if target.utf8.first == UInt8(ascii: "?") {
            target = "/" + target
        }
        // The authority, `[userinfo@]host[:port]` (an IPv6 host in brackets), cut by byte
        // offsets: no Substring, no Character (grapheme) search.
        var hostRange = authorityStart..<authorityEnd
        var portRange: Range<Int>?
        if authorityStart < authorityEnd, bytes[authorityStart] == UInt8(ascii: "[") {
            guard let close = bytes[authorityStart..<authorityEnd].firstIndex(of: UInt8(ascii: "]")) else {
                throw .invalidURL(string)
            }
            hostRange = (authorityStart + 1)..<close
            if close + 1 < authorityEnd {
                guard bytes[close + 1] == UInt8(ascii: ":") else { throw .invalidURL(string) }
                portRange = (close + 2)..<authorityEnd
            }
        } else if let colon = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: ":")) {
            hostRange = authorityStart..<colon
            portRange = (colon + 1)..<authorityEnd
        }
        guard !hostRange.isEmpty else { throw .invalidURL(string) }
        var port = scheme.defaultPort
        if let portRange, !portRange.isEmpty {
            guard let parsed = Int(text(portRange)), (1...65535).contains(parsed) else { throw .invalidURL(string) }
            port = parsed
        }
        if bytes[authorityEnd..<restEnd].contains(where: { $0 == 0x20 || $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw .invalidURL(string)
        }
        let hostString = text(hostRange)
        self.scheme = scheme
        self.host = hostString
        self.port = port
        self.target = target
        // `utf8.contains`: with Foundation imported, `String.contains(":")` is NSString's
        // range(of:), about half of this initializer's cost per request.
        let bracketed = hostString.utf8.contains(UInt8(ascii: ":")) ? "[\(hostString)]" : hostString
        self.hostHeader = port == scheme.defaultPort ? bracketed : "\(bracketed):\(port)"
        self.socketPath = nil
    }

    /// The target of an `http+unix` or `https+unix` URL: the socket is the URL's host,
    /// percent-decoded; the request names `localhost` (its `Host` header, and over TLS the
    /// name SNI carries and the certificate must hold), as curl does for `--unix-socket`.
    private init(unixScheme scheme: Scheme, encodedPath: String, target: String, string: String) throws(EngineError) {
        guard let path = encodedPath.removingPercentEncoding, !path.isEmpty, !path.utf8.contains(0),
            !encodedPath.contains("@")
        else {
            throw .invalidURL("\(string) (the host of a +unix URL is the socket's path, percent-encoded)")
        }
        if target.utf8.contains(where: { $0 == 0x20 || $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw .invalidURL(string)
        }
        self.scheme = scheme
        self.host = "localhost"
        self.port = scheme.defaultPort
        self.target = target.isEmpty ? "/" : target.utf8.first == UInt8(ascii: "?") ? "/" + target : target
        self.hostHeader = "localhost"
        self.socketPath = path
    }

    /// This target sent to the Unix domain socket at `path` (its host still names the server).
    func throughSocket(_ path: String) -> RequestTarget {
        var routed = self
        routed.socketPath = path
        return routed
    }
}
