import Foundation

/// What every compared client does, each in its own API's natural shape: open a WebSocket to
/// `url` with permessage-deflate off, play an ``EchoScript`` on it (binary messages, every echo
/// checked), and close it with 1000.
protocol EchoClient: Sendable {
    /// Opens a socket, makes the script's round trips and closes the socket; returns once the
    /// close handshake is done (or the connection is closed). Throws on a refused handshake, a
    /// wrong or missing echo, or a close other than 1000.
    func run(_ url: URL, _ script: EchoScript) async throws
    /// Releases connections and threads.
    func shutdown() async
}
