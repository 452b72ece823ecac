import Foundation

/// A forward proxy the engine sends its requests through: an HTTP proxy (the default kind) or
/// a SOCKS5 proxy (``Kind-swift.enum/socks5`` resolves the origin's name locally,
/// ``Kind-swift.enum/socks5h`` sends the name to the proxy).
///
/// Through an HTTP proxy, `http` requests go to the proxy in absolute form (`GET http://host/path HTTP/1.1`); `https`
/// requests open a tunnel with `CONNECT host:port` first, then TLS runs end to end with the
/// origin, so the security policy still sees the origin's certificate chain. With credentials,
/// every request (and every `CONNECT`) carries `Proxy-Authorization: Basic …`. Through a
/// SOCKS5 proxy every connection (http and https) is a SOCKS `CONNECT` to the origin, with
/// username/password authentication (RFC 1929) when credentials are set; TLS then runs end to
/// end with the origin. A proxy that answers otherwise fails the request with
/// ``EngineError/proxyFailed(proxy:target:refusal:)``.
///
/// A `Proxy-Authorization` field the caller set on a request: in absolute form (http through
/// an HTTP proxy) the proxy reads the head, so it goes as set (and wins over the configured
/// credentials). Through a tunnel (a `CONNECT` for https, or SOCKS5) the head goes to the
/// origin, so the field is dropped: the proxy's credentials never reach a third party. It is
/// not used for the `CONNECT` either: the tunnel is opened once per pooled connection, before
/// any request, and shared by every later request to the same origin through the same proxy,
/// so one request's credentials would open a tunnel for other callers. Set ``username`` and
/// ``password`` for the tunnel. Without a proxy the field is sent as given.
public struct EngineProxy: Sendable, Hashable {
    /// Which protocol the proxy speaks.
    public enum Kind: String, Sendable, Hashable {
        /// An HTTP proxy: absolute-form requests for `http`, `CONNECT` tunnels for `https`.
        case http
        /// SOCKS5 with the origin's host name resolved locally; the proxy gets an IP address.
        case socks5
        /// SOCKS5 with remote name resolution: the proxy gets the origin's host name.
        case socks5h
    }

    /// The proxy's protocol. Default ``Kind-swift.enum/http``.
    public var kind: Kind
    /// The proxy's host name or IP literal.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user name for Basic proxy authentication, if the proxy wants one.
    public var username: String?
    /// The password for Basic proxy authentication.
    public var password: String?

    /// A proxy at `host:port` speaking `kind` (default HTTP), with optional credentials
    /// (Basic for an HTTP proxy, RFC 1929 username/password for SOCKS5).
    public init(host: String, port: Int, username: String? = nil, password: String? = nil, kind: Kind = .http) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// `host:port` (IPv6 literals in brackets), for messages.
    var authority: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// The `Proxy-Authorization` value, when credentials are set.
    var authorization: String? {
        guard let username else { return nil }
        return "Basic " + Data("\(username):\(password ?? "")".utf8).base64EncodedString()
    }
}
