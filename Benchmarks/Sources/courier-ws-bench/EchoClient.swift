import Foundation

/// What every compared client does, each in its own API's natural shape: open a WebSocket to
/// `url` with permessage-deflate off, play an ``EchoScript`` on it (binary messages, every echo
/// checked), and close it with 1000.
protocol EchoClient: Sendable {
    /// Opens a socket, makes the script's round trips and closes the socket; returns once the
    /// close handshake is done (or the connection is closed). Throws on a refused handshake, a
    /// wrong or missing echo, or a close other than 1000.
    func run(_ url: URL, _ script: EchoScript) async throws
    /// Opens what an opening route keeps open before the first opening: for an RFC 8441
    /// route, the HTTP/2 connection, by a GET of `url` (on the sockets' origin). Only the
    /// clients that take such a route do anything.
    func prime(_ url: URL) async throws
    /// Releases connections and threads.
    func shutdown() async
    /// Where each socket's task runs; nil: Swift's cooperative pool.
    var taskExecutor: (any TaskExecutor)? { get }
}

extension EchoClient {
    /// Nothing to open: every socket opens its own connection.
    func prime(_ url: URL) async throws {}

    /// The cooperative pool.
    var taskExecutor: (any TaskExecutor)? { nil }
}
