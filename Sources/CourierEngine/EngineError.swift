/// Everything that can go wrong while ``HTTPEngine`` executes a request.
///
/// Each case carries the cause, so a caller can tell a bad URL from a refused connection, a
/// rejected certificate or a server that broke the protocol. The engine delivers exactly one
/// terminal event per request; when that event is a failure, it carries one of these.
public enum EngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which of the engine's clocks ran out.
    public enum TimeoutKind: String, Sendable, Equatable {
        /// The name lookup, TCP connect and TLS handshake took longer than the connect timeout.
        case connect
        /// No byte moved in either direction for the idle timeout (`URLRequest.timeoutInterval`).
        case idle
        /// The request's total deadline passed.
        case deadline
    }

    /// The URL could not be turned into a request (no host, bad port, ...).
    case invalidURL(String)
    /// The URL's scheme is neither `http` nor `https`.
    case unsupportedScheme(String)
    /// A header name or value is not allowed (CR, LF, NUL, or a name that is not an HTTP token).
    case invalidHeader(name: String, reason: String)
    /// The request body could not be read (a missing file, a failing stream, a length mismatch).
    case invalidBody(String)
    /// The host name did not resolve.
    case dnsFailure(host: String, reason: String)
    /// No TCP connection could be made to any resolved address.
    case cannotConnect(host: String, port: Int, reason: String)
    /// The TLS handshake failed for a reason other than the certificate check.
    case tlsHandshakeFailed(String)
    /// The server's certificate chain was rejected (by the system roots or by the verifier).
    /// `chain` is what the server presented (DER, leaf first) when the verifier saw it; empty
    /// when the system roots rejected it during the handshake.
    case serverTrustRejected(host: String, reason: String, chain: [[UInt8]] = [])
    /// One of the request's clocks ran out.
    case timedOut(TimeoutKind)
    /// The connection closed or reset before the response was complete.
    case connectionLost(String)
    /// The server sent something that is not valid HTTP (with what was wrong): a malformed
    /// HTTP/1.1 message, or a response too large for its limits on either protocol. Violations
    /// of HTTP/2's framing are ``http2ProtocolViolation(_:)``.
    case protocolViolation(String)
    /// An HTTP/2 stream or connection ended over a protocol violation: what it was, who
    /// noticed it and ended the stream (Courier when the server's frames were invalid), and
    /// the HTTP/2 error code.
    case http2ProtocolViolation(HTTP2ProtocolViolation)
    /// The request was cancelled by its caller.
    case cancelled
    /// A compressed response expanded past the configured ratio or size.
    case decompressionLimitExceeded(String)
    /// The engine was shut down before or while the request ran.
    case shutDown
    /// The proxy (`host:port`) did not carry the connection to `target` (`host:port`):
    /// ``ProxyRefusal`` says what it answered (refused credentials, a SOCKS reply code, not a
    /// SOCKS server at all, …).
    case proxyFailed(proxy: String, target: String, refusal: ProxyRefusal)

    /// What went wrong, in words (the case and its details).
    public var description: String {
        switch self {
        case .invalidURL(let url): return "invalid URL: \(url)"
        case .unsupportedScheme(let scheme): return "unsupported URL scheme '\(scheme)' (only http and https)"
        case .invalidHeader(let name, let reason): return "invalid header '\(name)': \(reason)"
        case .invalidBody(let reason): return "invalid request body: \(reason)"
        case .dnsFailure(let host, let reason): return "could not resolve host '\(host)': \(reason)"
        case .cannotConnect(let host, let port, let reason): return "could not connect to \(host):\(port): \(reason)"
        case .tlsHandshakeFailed(let reason): return "TLS handshake failed: \(reason)"
        case .serverTrustRejected(let host, let reason, _): return "the certificate for \(host) was rejected: \(reason)"
        case .timedOut(let kind): return "the request timed out (\(kind.rawValue))"
        case .connectionLost(let reason): return "the network connection was lost: \(reason)"
        case .protocolViolation(let reason): return "the server violated HTTP: \(reason)"
        case .http2ProtocolViolation(let violation): return violation.description
        case .cancelled: return "cancelled"
        case .decompressionLimitExceeded(let reason): return "decompression limit exceeded: \(reason)"
        case .shutDown: return "the engine was shut down"
        case .proxyFailed(let proxy, let target, let refusal):
            return "the proxy \(proxy) did not connect to \(target): \(refusal)"
        }
    }
}
