/// How far the setup of a new connection got: the step it was in when a request waiting for
/// that connection ended (its deadline passed, or it was cancelled). Reported in
/// ``EngineMetrics/connectionSetupPhase``.
public enum ConnectionSetupPhase: UInt8, Sendable, Equatable, CustomStringConvertible {
    /// Looking up the host name (of the origin, or of the proxy).
    case resolving
    /// Opening the TCP connection (to the origin, or to the proxy).
    case connecting
    /// Waiting for the proxy to open the tunnel (an HTTP `CONNECT`, or the SOCKS5 handshake).
    case proxyHandshake
    /// The TLS handshake with the origin.
    case tlsHandshake
    /// Set up; the request had not been handed the connection yet.
    case established

    /// The step in words ("the TLS handshake").
    public var description: String {
        switch self {
        case .resolving: return "the name lookup"
        case .connecting: return "the TCP connect"
        case .proxyHandshake: return "the proxy handshake"
        case .tlsHandshake: return "the TLS handshake"
        case .established: return "the wait for the new connection"
        }
    }
}
