#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Proxy settings read from environment variables, with curl's rules. Pure: it reads only the
/// dictionary it is given (``process`` reads this process's environment once, when called).
///
/// Which variable applies to a request:
/// - `http` URLs: `http_proxy` (lower case only: like curl, the upper-case `HTTP_PROXY` is
///   ignored, because a CGI program gets a request's `Proxy:` header as `HTTP_PROXY`
///   ("httpoxy")), else `all_proxy` / `ALL_PROXY`.
/// - `https` URLs: `https_proxy` / `HTTPS_PROXY`, else `all_proxy` / `ALL_PROXY`.
///
/// The lower-case spelling wins when both are set. An empty value counts as unset.
/// A value is a URL `[scheme://][user[:password]@]host[:port]`: scheme `http` (the default),
/// `socks5` (names resolved locally) or `socks5h` (names resolved by the proxy); port 1080 when
/// none is given (curl's default); user and password percent-decoded.
///
/// `no_proxy` / `NO_PROXY` (comma- or space-separated) lists hosts reached directly:
/// `*` (every host); a domain (`example.com` or `.example.com`: that host and every name under
/// it, case-insensitive); an IP literal (`10.1.2.3`, `::1` or `[::1]`) or a CIDR range
/// (`10.0.0.0/8`, `fd00::/8`), compared with IP-literal URL hosts only (no DNS lookup); any of
/// these with `:port` (`[::1]:8080`) to bypass only that port.
public struct ProxyEnvironment: Sendable, Hashable {
    /// The proxy URL for `http` requests (`http_proxy`), or nil.
    public var httpProxy: String?
    /// The proxy URL for `https` requests (`https_proxy`), or nil.
    public var httpsProxy: String?
    /// The proxy URL for requests no scheme-specific variable covers (`all_proxy`), or nil.
    public var allProxy: String?
    /// The hosts reached directly (`no_proxy`), or nil.
    public var noProxy: String?

    /// Settings given directly, one per variable.
    public init(httpProxy: String? = nil, httpsProxy: String? = nil, allProxy: String? = nil, noProxy: String? = nil) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.allProxy = allProxy
        self.noProxy = noProxy
    }

    /// Settings from an environment dictionary (variable name → value), with curl's rules:
    /// `http_proxy` lower case only, the others lower case first, then upper case; empty
    /// values ignored.
    public init(environment: [String: String]) {
        func value(_ names: String...) -> String? {
            for name in names {
                if let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
            }
            return nil
        }
        self.init(
            httpProxy: value("http_proxy"),
            httpsProxy: value("https_proxy", "HTTPS_PROXY"),
            allProxy: value("all_proxy", "ALL_PROXY"),
            noProxy: value("no_proxy", "NO_PROXY"))
    }

    /// This process's environment variables, read when called.
    public static var process: ProxyEnvironment { ProxyEnvironment(environment: ProcessInfo.processInfo.environment) }

    /// The proxy for a request to `scheme://host:port`, or nil to connect directly (no variable
    /// applies, or `no_proxy` lists the host).
    ///
    /// - Throws: ``EngineError/invalidURL(_:)`` naming the variable when its value is not a
    ///   proxy URL Courier can use.
    public func proxy(scheme: String, host: String, port: Int) throws(EngineError) -> EngineProxy? {
        let chosen: (name: String, value: String)?
        switch scheme.lowercased() {
        case "http": chosen = httpProxy.map { ("http_proxy", $0) } ?? allProxy.map { ("all_proxy", $0) }
        case "https": chosen = httpsProxy.map { ("https_proxy", $0) } ?? allProxy.map { ("all_proxy", $0) }
        default: chosen = allProxy.map { ("all_proxy", $0) }
        }
        guard let chosen else { return nil }
        if let noProxy, Self.bypasses(host: host, port: port, noProxy: noProxy) { return nil }
        do {
            return try EngineProxy(url: chosen.value)
        } catch {
            guard case .invalidURL(let reason) = error else { throw error }
            throw .invalidURL("\(chosen.name): \(reason)")
        }
    }

    /// Whether `no_proxy` (the list) sends `host:port` directly.
    public static func bypasses(host rawHost: String, port: Int, noProxy: String) -> Bool {
        var host = rawHost.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        let hostAddress = IPAddressBytes(host) ?? IPAddressBytes(numericIPv4Host: host)
        for raw in noProxy.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            let entry = raw.lowercased()
            if entry == "*" { return true }
            guard let pattern = NoProxyEntry(entry) else { continue }
            if let wanted = pattern.port, wanted != port { continue }
            if let hostAddress {
                if let network = pattern.address, hostAddress.isIn(network, prefixLength: pattern.prefixLength) {
                    return true
                }
            } else if pattern.address == nil, !pattern.name.isEmpty {
                if host == pattern.name || host.hasSuffix("." + pattern.name) { return true }
            }
        }
        return false
    }
}

/// One `no_proxy` entry: a name (leading dots dropped) or an address with a prefix length,
/// and an optional port.
struct NoProxyEntry {
    var name: String
    var address: IPAddressBytes?
    var prefixLength: Int?
    var port: Int?

    init?(_ text: String) {
        var hostPart = Substring(text)
        var port: Int?
        if hostPart.hasPrefix("[") {
            // [v6] or [v6]:port or [v6/len]
            guard let close = hostPart.firstIndex(of: "]") else { return nil }
            let after = hostPart[hostPart.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()), (0...65_535).contains(value) else { return nil }
                port = value
            } else if !after.isEmpty {
                return nil
            }
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
        } else if hostPart.filter({ $0 == ":" }).count == 1, let colon = hostPart.firstIndex(of: ":") {
            guard let value = Int(hostPart[hostPart.index(after: colon)...]), (0...65_535).contains(value) else { return nil }
            port = value
            hostPart = hostPart[..<colon]
        }
        var prefixLength: Int?
        if let slash = hostPart.firstIndex(of: "/") {
            guard let length = Int(hostPart[hostPart.index(after: slash)...]), length >= 0 else { return nil }
            prefixLength = length
            hostPart = hostPart[..<slash]
        }
        var name = String(hostPart)
        while name.hasPrefix(".") { name.removeFirst() }
        while name.hasSuffix(".") { name.removeLast() }
        self.name = name
        self.port = port
        self.address = IPAddressBytes(name)
        if let prefixLength, let address {
            guard prefixLength <= address.bytes.count * 8 else { return nil }
        } else if prefixLength != nil {
            return nil  // a prefix length on a name
        }
        self.prefixLength = prefixLength
    }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address parsed from its text form.
struct IPAddressBytes: Equatable {
    var bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// The IPv4 address a URL host written in one of the other numeric forms stands for, as
    /// curl and the resolver read it (`inet_aton`'s forms): fewer parts (`127.1`), one number
    /// (`2130706433`), hexadecimal (`0x7f000001`) or octal parts (`0177.0.0.1`,
    /// `127.000.000.001`). Nil for anything with other characters (a name).
    init?(numericIPv4Host text: String) {
        guard !text.isEmpty, text.utf8.allSatisfy({ byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) || byte == UInt8(ascii: "x")
                || byte == UInt8(ascii: "X") || byte == UInt8(ascii: ".")
        }) else { return nil }
        var v4 = in_addr()
        guard inet_aton(text, &v4) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v4) { Array($0) }
    }

    /// Whether the first `prefixLength` bits (all when nil) equal `network`'s; families must match.
    func isIn(_ network: IPAddressBytes, prefixLength: Int?) -> Bool {
        guard bytes.count == network.bytes.count else { return false }
        let bits = min(prefixLength ?? bytes.count * 8, bytes.count * 8)
        for index in 0..<bytes.count {
            let remaining = bits - index * 8
            if remaining <= 0 { break }
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if bytes[index] & mask != network.bytes[index] & mask { return false }
        }
        return true
    }
}

extension EngineProxy {
    /// A proxy from a URL such as `http://proxy:3128`, `socks5h://user:pw@127.0.0.1:1080` or
    /// `proxy.example` (scheme `http`, port 1080 when missing, like curl; user and password
    /// percent-decoded; IPv6 literals in brackets).
    ///
    /// - Throws: ``EngineError/invalidURL(_:)`` for a value that is not such a URL, or a scheme
    ///   other than `http`, `socks5` and `socks5h`.
    public init(url text: String) throws(EngineError) {
        let withScheme = text.contains("://") ? text : "http://" + text
        let shown = Self.withoutCredentials(text)
        guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty else {
            throw .invalidURL("proxy \(shown) is not a [scheme://][user:password@]host[:port] URL")
        }
        let scheme = components.scheme?.lowercased() ?? "http"
        guard let kind = Kind(rawValue: scheme) else {
            throw .invalidURL("proxy \(shown): the scheme \(scheme) is not supported (http, socks5, socks5h)")
        }
        // URLComponents answers a nil port for one too large for an Int: read the text itself,
        // so such a port is refused rather than silently replaced by the default.
        let portText = Self.portText(ofURL: withScheme)
        let port = portText.isEmpty ? 1080 : Int(portText) ?? 0
        guard (1...65_535).contains(port) else { throw .invalidURL("proxy \(shown): port \(portText) is out of range") }
        var bare = host
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        self.init(
            host: bare, port: port, username: components.user?.removingPercentEncoding,
            password: components.password?.removingPercentEncoding, kind: kind)
    }

    /// `url` for an error message: anything between the scheme and the last `@` (the user
    /// name and password, which must not reach logs) replaced by `***`.
    private static func withoutCredentials(_ url: String) -> String {
        let start = url.range(of: "://")?.upperBound ?? url.startIndex
        guard let at = url.lastIndex(of: "@"), at >= start else { return url }
        return url[..<start] + "***" + url[at...]
    }

    /// The port as written in `url` (`scheme://[userinfo@]host[:port][/…]`), or "" when none.
    private static func portText(ofURL url: String) -> Substring {
        guard let schemeEnd = url.range(of: "://") else { return "" }
        let rest = url[schemeEnd.upperBound...]
        var authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if let close = authority.lastIndex(of: "]") { authority = authority[authority.index(after: close)...] }
        guard let colon = authority.lastIndex(of: ":") else { return "" }
        return authority[authority.index(after: colon)...]
    }
}

extension EngineConfiguration {
    /// The proxy for `target`: none for a Unix domain socket, else the explicit ``proxy``
    /// when set, else the one ``proxyEnvironment`` picks, else nil.
    ///
    /// - Throws: ``EngineError/invalidURL(_:)`` for an environment value that is not a proxy
    ///   URL, and for what a SOCKS5 proxy can't be sent (RFC 1928/1929 length bytes): a user
    ///   name not 1 to 255 bytes, a password over 255 bytes, a `socks5h` host name over 255
    ///   bytes. Before any I/O, so nothing is truncated and no proxy is blamed for it.
    func proxy(for target: RequestTarget) throws(EngineError) -> EngineProxy? {
        guard target.socketPath == nil else { return nil }
        let chosen: EngineProxy?
        if let proxy {
            chosen = proxy
        } else if let proxyEnvironment {
            chosen = try proxyEnvironment.proxy(scheme: target.scheme.rawValue, host: target.host, port: target.port)
        } else {
            chosen = nil
        }
        if let chosen, chosen.kind != .http { try chosen.checkSOCKS5Lengths(host: target.host) }
        return chosen
    }
}

extension EngineProxy {
    /// Throws ``EngineError/invalidURL(_:)`` when a SOCKS5 handshake could not carry this
    /// proxy's credentials, or `host` (sent by name for `socks5h`), in its one-byte lengths.
    func checkSOCKS5Lengths(host: String) throws(EngineError) {
        if let username {
            let userBytes = username.utf8.count
            let passwordBytes = password?.utf8.count ?? 0
            guard (1...255).contains(userBytes), passwordBytes <= 255 else {
                throw .invalidURL(
                    "SOCKS5 proxy \(authority): the user name must be 1 to 255 bytes and the password at most 255 "
                        + "(RFC 1929); they are \(userBytes) and \(passwordBytes)")
            }
        }
        if kind == .socks5h, IPAddressBytes(host) == nil, host.utf8.count > 255 {
            throw .invalidURL(
                "host name of \(host.utf8.count) bytes: a socks5h proxy (\(authority)) takes names up to 255 bytes")
        }
    }
}
