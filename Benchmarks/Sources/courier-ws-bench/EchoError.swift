/// What went wrong in a round trip or an opening.
enum EchoError: Error, CustomStringConvertible {
    /// An echo that is not the message sent.
    case mismatch(String)
    /// Something other than a binary echo arrived (a text message, the end of the socket).
    case unexpected(String)
    /// The server did not switch protocols: its status.
    case refused(Int)
    /// The socket ended before its last echo, or not with 1000.
    case badClose(String)

    var description: String {
        switch self {
        case .mismatch(let text): return "wrong echo: \(text)"
        case .unexpected(let text): return "unexpected: \(text)"
        case .refused(let status): return "the handshake was answered with \(status)"
        case .badClose(let text): return "bad close: \(text)"
        }
    }
}
