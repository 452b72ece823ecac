/// What makes two connections interchangeable: scheme, host, port, the proxy they go through
/// and the Unix domain socket they go to (the TLS settings are the engine's, so one engine has
/// one TLS configuration per key).
struct ConnectionKey: Hashable, Sendable, CustomStringConvertible {
    let scheme: RequestTarget.Scheme
    let host: String
    let port: Int
    /// The proxy this connection goes through, or nil for a direct connection.
    let proxy: EngineProxy?
    /// The Unix domain socket this connection goes to (no proxy then), or nil for TCP.
    let socketPath: String?

    init(_ target: RequestTarget, proxy: EngineProxy? = nil) {
        self.scheme = target.scheme
        self.host = target.host.lowercased()
        self.port = target.port
        self.proxy = target.socketPath == nil ? proxy : nil
        self.socketPath = target.socketPath
    }

    init(scheme: RequestTarget.Scheme, host: String, port: Int, proxy: EngineProxy? = nil, socketPath: String? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.proxy = socketPath == nil ? proxy : nil
        self.socketPath = socketPath
    }

    var description: String {
        let origin = "\(scheme.rawValue)://\(host):\(port)"
        if let socketPath { return origin + " via unix:\(socketPath)" }
        guard let proxy else { return origin }
        return origin + " via \(proxy.kind.rawValue)://\(proxy.authority)"
    }
}
