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
    /// Open a socket as an RFC 8441 stream of an HTTP/2 TLS connection that is already open,
    /// one echo, close; again, sequentially (Courier only).
    case openH2 = "open-h2"

    /// What one run of the case does.
    var workload: Workload {
        switch self {
        case .echo1Small: return .echo(sockets: 1, messageSize: 32)
        case .echo64Small: return .echo(sockets: 64, messageSize: 32)
        case .echo1Large: return .echo(sockets: 1, messageSize: 64 << 10)
        case .echo64Large: return .echo(sockets: 64, messageSize: 64 << 10)
        case .openTLS: return .open(.http1Upgrade)
        case .openH2: return .open(.http2Stream)
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
        case .openH2: return 1_000
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
