import ArgumentParser

/// The workloads. Echo cases send one message, wait for its echo, check it and send the next,
/// on each of their sockets at once; opening cases open sockets one after another.
enum WSCase: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case echo1Small = "echo-1-32b"
    case echo64Small = "echo-64-32b"
    case echo1Large = "echo-1-64k"
    case echo64Large = "echo-64-64k"
    /// Open a socket over TLS, one echo, close; again, sequentially.
    case openTLS = "open-tls"

    /// What one run of the case does.
    var workload: Workload {
        switch self {
        case .echo1Small: return .echo(sockets: 1, messageSize: 32)
        case .echo64Small: return .echo(sockets: 64, messageSize: 32)
        case .echo1Large: return .echo(sockets: 1, messageSize: 64 << 10)
        case .echo64Large: return .echo(sockets: 64, messageSize: 64 << 10)
        case .openTLS: return .open(.http1Upgrade)
        }
    }

    /// Timed operations in one run before `--scale`: round trips over all sockets (a multiple
    /// of the socket count), or openings. Chosen so that a run lasts about 1–3 s here.
    var defaultOperations: Int {
        switch self {
        case .echo1Small: return 20_000
        case .echo64Small: return 64_000
        case .echo1Large: return 4_000
        case .echo64Large: return 6_400
        case .openTLS: return 300
        }
    }

    /// The timed operations of a run scaled by `scale`: at least one round trip per socket, or
    /// one opening.
    func operations(scale: Double) -> Int {
        let scaled = Int((Double(defaultOperations) * scale).rounded())
        switch workload {
        case .echo(let sockets, _): return max(1, scaled / sockets) * sockets
        case .open: return max(1, scaled)
        }
    }

    /// Whether the case goes to the TLS server (`wss://localhost`), else to the plain one.
    var usesTLS: Bool {
        switch workload {
        case .echo: return false
        case .open: return true
        }
    }

    var unit: String {
        switch workload {
        case .echo: return "msg/s"
        case .open: return "opens/s"
        }
    }
}

/// One run of a case.
enum Workload: Sendable, Equatable {
    /// `sockets` sockets at once, each sending `messageSize`-byte binary messages one at a time.
    case echo(sockets: Int, messageSize: Int)
    /// Sockets opened one after another by `route`, each making one 32-byte echo and closing.
    case open(OpeningRoute)
}

/// How an opening case reaches the server.
///
/// Another route is a case here, a case of ``WSCase`` naming it (with its default count), and
/// the clients' ``WSClientKind/supports(_:)`` and configuration (the clients get the route when
/// they are made): an RFC 8441 stream on an HTTP/2 connection would be `http2Stream`, its untimed
/// first opening (every opening case makes one) leaving that connection open for the timed ones.
enum OpeningRoute: String, Codable, Sendable {
    /// `wss`: a new TCP connection, a TLS handshake and an HTTP/1.1 Upgrade each time.
    case http1Upgrade

    /// TCP connections the server accepts for `openings` openings (the untimed first included).
    func connections(forOpenings openings: Int) -> Int {
        switch self {
        case .http1Upgrade: return openings
        }
    }
}
