/// An HTTP/2 exchange that ended because one side broke the protocol or reset it: what was
/// wrong, who noticed and ended the stream or connection, and the HTTP/2 error code sent.
///
/// Its ``description`` names the party that ended the stream ("Courier reset the HTTP/2 stream:
/// …", "the server reset the HTTP/2 stream with INTERNAL_ERROR") and never carries a source
/// file or line.
public struct HTTP2ProtocolViolation: Sendable, Equatable, CustomStringConvertible {
    /// Who detected the problem and ended the stream or connection.
    public enum Party: String, Sendable, Equatable {
        /// Courier found the server's frames invalid and reset the stream (or closed the
        /// connection with `GOAWAY`).
        case courier
        /// The server ended the stream (`RST_STREAM`) or the connection (`GOAWAY` with an error).
        case server
    }

    /// What was ended.
    public enum Scope: String, Sendable, Equatable {
        /// One stream (`RST_STREAM`); the connection's other streams go on.
        case stream
        /// The whole connection (`GOAWAY`).
        case connection
    }

    /// The violation's name, as the HTTP/2 layer calls it (`InvalidFlowControlWindowSize`,
    /// `ExcessiveContinuationFrames`, …), or `RST_STREAM` for a reset received from the server.
    public var name: String
    /// Who ended the stream or connection.
    public var endedBy: Party
    /// Whether a stream or the connection was ended.
    public var scope: Scope
    /// The HTTP/2 error code sent or received (`FLOW_CONTROL_ERROR`, `PROTOCOL_ERROR`, …), when known.
    public var errorCode: String?
    /// What was wrong, in words.
    public var reason: String

    /// Creates a violation.
    public init(name: String, endedBy: Party, scope: Scope, errorCode: String? = nil, reason: String) {
        self.name = name
        self.endedBy = endedBy
        self.scope = scope
        self.errorCode = errorCode
        self.reason = reason
    }

    /// Who ended what, and why: `Courier reset the HTTP/2 stream: <reason> (<name>,
    /// <code>)`, `Courier closed the HTTP/2 connection: …`, `the server reset the HTTP/2
    /// stream with <code>`, `the server closed the HTTP/2 connection with <code>`.
    public var description: String {
        let what = scope == .stream ? "the HTTP/2 stream" : "the HTTP/2 connection"
        switch endedBy {
        case .courier:
            let verb = scope == .stream ? "reset" : "closed"
            let detail = [name, errorCode].compactMap { $0 }.joined(separator: ", ")
            return "Courier \(verb) \(what): \(reason) (\(detail))"
        case .server:
            let verb = scope == .stream ? "reset" : "closed"
            let code = errorCode.map { " with \($0)" } ?? ""
            return "the server \(verb) \(what)\(code)" + (reason.isEmpty ? "" : ": \(reason)")
        }
    }
}
