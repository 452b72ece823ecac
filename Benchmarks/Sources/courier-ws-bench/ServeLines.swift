import Foundation

/// The first line `courier-ws-bench serve` prints: where its servers listen and where it wrote
/// the root of their certificate authority.
struct ServerReady: Codable, Sendable {
    /// The plain server's `ws://127.0.0.1:PORT/ws/echo?deflate=off`.
    var echoURL: String
    /// The TLS server's `wss://localhost:PORT/ws/echo?deflate=off`.
    var tlsEchoURL: String
    /// The root CA of the TLS server's chain, PEM.
    var caPEMPath: String
}

/// The line `serve` prints for each `stats` line it reads: its counters so far, over both servers.
struct ServerStats: Codable, Sendable {
    /// TCP connections accepted.
    var connections: Int
    /// WebSocket close frames received with code 1000.
    var normalCloses: Int
    /// WebSocket close frames received with another code or none.
    var otherCloses: Int
}

/// Writes `value` as one JSON line on stdout, at once (stdout is a pipe, so `print` would buffer).
func emitLine<Value: Encodable>(_ value: Value) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(value) else { return }
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}
