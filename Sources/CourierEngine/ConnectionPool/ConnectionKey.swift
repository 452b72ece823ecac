/// What makes two connections interchangeable: scheme, host, port and the proxy they go
/// through (the TLS settings are the engine's, so one engine has one TLS configuration per key).
struct ConnectionKey: Hashable, Sendable, CustomStringConvertible {
    let scheme: RequestTarget.Scheme
    let host: String
    let port: Int
    /// The proxy this connection goes through, or nil for a direct connection.
    let proxy: EngineProxy?

    init(_ target: RequestTarget, proxy: EngineProxy? = nil) {
        self.scheme = target.scheme
        self.host = target.host.lowercased()
        self.port = target.port
        self.proxy = proxy
    }

    init(scheme: RequestTarget.Scheme, host: String, port: Int, proxy: EngineProxy? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.proxy = proxy
    }

    var description: String {
        let origin = "\(scheme.rawValue)://\(host):\(port)"
        guard let proxy else { return origin }
        return origin + " via \(proxy.kind.rawValue)://\(proxy.authority)"
    }
}
