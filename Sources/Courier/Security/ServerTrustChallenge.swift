/// A TLS server asking to be trusted: AFNetworking's `NSURLAuthenticationMethodServerTrust`
/// challenge, with the chain as the server sent it.
public struct ServerTrustChallenge: Sendable {
    /// The host the request named (a name or an IP literal).
    public let host: String
    /// The server's certificates, leaf first.
    public let certificateChain: [Certificate]
}

/// The answer to a ``ServerTrustChallenge``.
public enum ServerTrustDisposition: Sendable {
    /// Trust the server without further checks.
    case trust
    /// Refuse the server; the task fails with ``CourierError/serverTrustRejected(host:reason:url:chain:)``.
    case reject(reason: String)
    /// Let the manager's ``URLSessionManager/securityPolicy`` decide.
    case performDefaultHandling
}
