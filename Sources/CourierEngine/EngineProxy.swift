import Foundation

/// A forward HTTP proxy the engine sends its requests through.
///
/// `http` requests go to the proxy in absolute form (`GET http://host/path HTTP/1.1`); `https`
/// requests open a tunnel with `CONNECT host:port` first, then TLS runs end to end with the
/// origin, so the security policy still sees the origin's certificate chain. With credentials,
/// every request (and every `CONNECT`) carries `Proxy-Authorization: Basic …`.
public struct EngineProxy: Sendable, Equatable {
    /// The proxy's host name or IP literal.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user name for Basic proxy authentication, if the proxy wants one.
    public var username: String?
    /// The password for Basic proxy authentication.
    public var password: String?

    /// A proxy at `host:port`, with optional Basic credentials.
    public init(host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// The `Proxy-Authorization` value, when credentials are set.
    var authorization: String? {
        guard let username else { return nil }
        return "Basic " + Data("\(username):\(password ?? "")".utf8).base64EncodedString()
    }
}
