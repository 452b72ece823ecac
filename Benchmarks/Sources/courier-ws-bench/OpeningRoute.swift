import Foundation

/// How an opening case reaches the server. The clients get the route when they are made
/// (``WSClientKind/supports(_:)`` says which can take it); every opening case makes one untimed
/// opening first, after ``EchoClient/prime(_:)``.
enum OpeningRoute: String, Codable, Sendable {
    /// `wss`: a new TCP connection, a TLS handshake and an HTTP/1.1 Upgrade each time.
    case http1Upgrade
    /// `wss` as an RFC 8441 extended-CONNECT stream of one HTTP/2 TLS connection, opened before
    /// the first opening by a GET to the same origin and kept open by the client's pool: no TCP
    /// or TLS handshake per socket.
    case http2Stream

    /// TCP connections the server accepts for `openings` openings (the untimed first included,
    /// and the priming GET's connection, which the streams share).
    func connections(forOpenings openings: Int) -> Int {
        switch self {
        case .http1Upgrade: return openings
        case .http2Stream: return 1
        }
    }

    /// The protocol a socket opened by this route names in its metrics
    /// (`EngineMetrics.networkProtocolName`); a socket that names another went another way.
    var networkProtocolName: String {
        switch self {
        case .http1Upgrade: return "http/1.1"
        case .http2Stream: return "h2"
        }
    }

    /// The URL `prime` GETs before the first opening: `/get` on the socket's origin (`wss` as
    /// `https`), so that the HTTP/2 connection the streams go on is open. Nil for a route that
    /// needs nothing open.
    func primingURL(forSocket url: URL) -> URL? {
        guard self == .http2Stream, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.scheme = components.scheme == "ws" ? "http" : "https"
        components.path = "/get"
        components.query = nil
        return components.url
    }
}
