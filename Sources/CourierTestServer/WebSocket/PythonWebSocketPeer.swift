public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A WebSocket peer that is not Courier, from `.build/python-venv` (pinned, installed by
/// `scripts/install-dependencies.sh`): the Python `websockets` library, run by
/// `scripts/interop/websockets_peer.py` (as a server it echoes, permessage-deflate on, the
/// library's default; as a client it checks our server's echoes), or Hypercorn, run by
/// `scripts/interop/hypercorn_peer.py` (an echo server that speaks RFC 8441 over HTTP/2).
public final class PythonWebSocketPeer: @unchecked Sendable {
    /// The port the Python server listens on (127.0.0.1).
    public let port: Int
    private let process: Process

    /// The package's root, from this file's place in it.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's interpreter and the peer script.
    static var python: URL { packageRoot.appendingPathComponent(".build/python-venv/bin/python") }
    static var script: URL { packageRoot.appendingPathComponent("scripts/interop/websockets_peer.py") }

    /// Why the peer could not run.
    public struct Unavailable: Error, CustomStringConvertible {
        /// What is missing or what failed.
        public let description: String
    }

    private init(port: Int, process: Process) {
        self.port = port
        self.process = process
    }

    /// Starts the Python echo server; over TLS with `chain` (its certificates and key, written
    /// to temporary PEM files) when given.
    public static func startServer(tls chain: ServerChain? = nil) throws -> PythonWebSocketPeer {
        try checkInstalled(module: "websockets")
        return try start([script.path, "server"] + (chain.map { try pemArguments($0) } ?? []))
    }

    /// Starts Hypercorn over TLS with `chain` (h2 and http/1.1 by ALPN): an echo WebSocket at
    /// any path, over HTTP/2 as an RFC 8441 stream when the client opens it so, whose first
    /// message names the HTTP version that carried the handshake (`http/2`, `http/1.1`); any
    /// HTTP request gets `200 ok VERSION`.
    public static func startHypercorn(tls chain: ServerChain) throws -> PythonWebSocketPeer {
        try checkInstalled(module: "hypercorn")
        return try start([hypercornScript.path] + pemArguments(chain))
    }

    static var hypercornScript: URL { packageRoot.appendingPathComponent("scripts/interop/hypercorn_peer.py") }

    /// `--cert` and `--key` naming temporary PEM files that hold `chain`.
    private static func pemArguments(_ chain: ServerChain) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ws-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("chain.pem")
        let key = directory.appendingPathComponent("key.pem")
        try Data(chain.certificatesPEM.utf8).write(to: cert)
        try Data(chain.privateKeyPEM.utf8).write(to: key)
        return ["--cert", cert.path, "--key", key.path]
    }

    /// Runs the venv's Python with `arguments` and waits for its first line, "PORT <n>".
    private static func start(_ arguments: [String]) throws -> PythonWebSocketPeer {
        let process = Process()
        process.executableURL = python
        process.arguments = arguments
        let output = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        try ProcessLauncher.run(process)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let portText = text.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines), let port = Int(portText) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw Unavailable(description: "the Python peer did not start: \(text)")
        }
        return PythonWebSocketPeer(port: port, process: process)
    }

    /// Runs the Python client against `url` to its end: its exit status and output ("ok …").
    public static func runClient(_ url: URL) throws -> (status: Int32, output: String) {
        try checkInstalled(module: "websockets")
        let result = try ProcessLauncher.runToEnd(python.path, [script.path, "client", url.absoluteString], includingStandardError: true)
        return (result.status, String(decoding: result.output, as: UTF8.self))
    }

    /// Stops the server (SIGKILL: a SIGTERM the test process ignores is ignored by its children
    /// too) and waits for it.
    public func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private static func checkInstalled(module: String) throws {
        let hint = "run scripts/install-dependencies.sh (it installs Python's websockets and Hypercorn)"
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Unavailable(description: "\(python.path) is missing: \(hint)")
        }
        guard (try? ProcessLauncher.runToEnd(python.path, ["-c", "import \(module)"], includingStandardError: true).status) == 0 else {
            throw Unavailable(description: "Python's \(module) is not installed in .build/python-venv: \(hint)")
        }
    }
}
