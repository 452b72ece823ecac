/// What a proxy answered when it would not carry a connection (see
/// ``EngineError/proxyFailed(proxy:target:refusal:)``).
public enum ProxyRefusal: Sendable, Hashable, CustomStringConvertible {
    /// The proxy answered, but not in SOCKS5 (the first bytes it sent, up to 8).
    case notASOCKS5Server(firstBytes: [UInt8])
    /// The proxy accepts none of the authentication methods offered (no credentials were
    /// configured and it wants some, or it wants a method Courier does not speak).
    case noAcceptableAuthenticationMethod
    /// The proxy refused the user name and password (RFC 1929 status other than 0).
    case authenticationRefused(status: UInt8)
    /// SOCKS5 reply 1: general SOCKS server failure.
    case generalFailure
    /// SOCKS5 reply 2: the connection is not allowed by the proxy's rules.
    case notAllowedByRuleset
    /// SOCKS5 reply 3: network unreachable.
    case networkUnreachable
    /// SOCKS5 reply 4: host unreachable.
    case hostUnreachable
    /// SOCKS5 reply 5: the origin refused the connection.
    case connectionRefused
    /// SOCKS5 reply 6: TTL expired.
    case ttlExpired
    /// SOCKS5 reply 7: command not supported.
    case commandNotSupported
    /// SOCKS5 reply 8: address type not supported (a `socks5h` proxy that can't resolve
    /// names answers this).
    case addressTypeNotSupported
    /// Another SOCKS5 reply code.
    case unknownReply(UInt8)
    /// The proxy's answer broke the protocol (what was wrong).
    case malformedAnswer(String)
    /// The proxy closed the connection before the handshake finished.
    case closedDuringHandshake

    /// The refusal for SOCKS5 reply `code` (not 0, which is success).
    init(socksReply code: UInt8) {
        switch code {
        case 1: self = .generalFailure
        case 2: self = .notAllowedByRuleset
        case 3: self = .networkUnreachable
        case 4: self = .hostUnreachable
        case 5: self = .connectionRefused
        case 6: self = .ttlExpired
        case 7: self = .commandNotSupported
        case 8: self = .addressTypeNotSupported
        default: self = .unknownReply(code)
        }
    }

    /// What the proxy answered, in words.
    public var description: String {
        switch self {
        case .notASOCKS5Server(let bytes):
            return "it is not a SOCKS5 server (it answered \(bytes.map { String($0, radix: 16) }.joined(separator: " ")))"
        case .noAcceptableAuthenticationMethod: return "it accepts none of the offered authentication methods"
        case .authenticationRefused(let status): return "it refused the user name and password (status \(status))"
        case .generalFailure: return "general SOCKS server failure (reply 1)"
        case .notAllowedByRuleset: return "connection not allowed by ruleset (reply 2)"
        case .networkUnreachable: return "network unreachable (reply 3)"
        case .hostUnreachable: return "host unreachable (reply 4)"
        case .connectionRefused: return "connection refused (reply 5)"
        case .ttlExpired: return "TTL expired (reply 6)"
        case .commandNotSupported: return "command not supported (reply 7)"
        case .addressTypeNotSupported: return "address type not supported (reply 8)"
        case .unknownReply(let code): return "unknown SOCKS reply \(code)"
        case .malformedAnswer(let what): return "malformed answer: \(what)"
        case .closedDuringHandshake: return "it closed the connection during the SOCKS handshake"
        }
    }
}
