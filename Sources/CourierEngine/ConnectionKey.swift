/// What makes two connections interchangeable: scheme, host, port (the TLS settings are the
/// engine's, so one engine has one TLS configuration per key).
struct ConnectionKey: Hashable, Sendable, CustomStringConvertible {
    let scheme: RequestTarget.Scheme
    let host: String
    let port: Int

    init(_ target: RequestTarget) {
        self.scheme = target.scheme
        self.host = target.host.lowercased()
        self.port = target.port
    }

    init(scheme: RequestTarget.Scheme, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    var description: String { "\(scheme.rawValue)://\(host):\(port)" }
}
