/// Why a WebSocket closed: the status codes of RFC 6455 §7.4 with the cases and raw values of
/// `URLSessionWebSocketTask.CloseCode`, so code written against Apple's task reads the same.
///
/// A code outside these cases (1012–1014, the application range 3000–4999) has no case:
/// the socket's raw close status keeps the number.
public enum WebSocketCloseCode: Int, Sendable, CustomStringConvertible {
    /// Not closed yet.
    case invalid = 0
    /// The purpose of the connection was fulfilled.
    case normalClosure = 1000
    /// An endpoint is going away (a server shutting down, a client cancelled).
    case goingAway = 1001
    /// The peer broke the protocol.
    case protocolError = 1002
    /// A message of a type the endpoint cannot accept.
    case unsupportedData = 1003
    /// The close frame carried no status code (never sent in a frame).
    case noStatusReceived = 1005
    /// The connection ended without a close frame (never sent in a frame).
    case abnormalClosure = 1006
    /// A text message that is not UTF-8, or a payload that does not decode.
    case invalidFramePayloadData = 1007
    /// A message that violates the endpoint's policy.
    case policyViolation = 1008
    /// A message larger than the endpoint takes.
    case messageTooBig = 1009
    /// The client needed an extension the server did not negotiate.
    case mandatoryExtensionMissing = 1010
    /// The server hit an unexpected condition.
    case internalServerError = 1011
    /// The TLS handshake failed (never sent in a frame).
    case tlsHandshakeFailure = 1015

    /// Whether a peer may put `code` in a close frame (RFC 6455 §7.4 and the IANA registry:
    /// 1000–1003, 1007–1014, 3000–4999); 1004–1006, 1015 and everything else may not.
    public static func maySend(_ code: Int) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// Whether the close was a normal one (1000 or 1001).
    public var isNormal: Bool { self == .normalClosure || self == .goingAway }

    /// `1000 (normal closure)`.
    public var description: String { Self.describe(rawValue) }

    /// `code` with its name: `1009 (message too big)`, `4001 (application code)`.
    public static func describe(_ code: Int) -> String {
        let name: String
        switch WebSocketCloseCode(rawValue: code) {
        case .invalid: name = "not closed"
        case .normalClosure: name = "normal closure"
        case .goingAway: name = "going away"
        case .protocolError: name = "protocol error"
        case .unsupportedData: name = "unsupported data"
        case .noStatusReceived: name = "no status received"
        case .abnormalClosure: name = "abnormal closure"
        case .invalidFramePayloadData: name = "invalid frame payload data"
        case .policyViolation: name = "policy violation"
        case .messageTooBig: name = "message too big"
        case .mandatoryExtensionMissing: name = "mandatory extension missing"
        case .internalServerError: name = "internal server error"
        case .tlsHandshakeFailure: name = "TLS handshake failure"
        case nil: name = (3000...4999).contains(code) ? "application code" : "unregistered code"
        }
        return "\(code) (\(name))"
    }
}
