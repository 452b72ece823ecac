import ArgumentParser
import CourierTestServer
import Foundation

/// `courier-ws-bench serve`: the echo server in a process of its own, so that its CPU and
/// memory are not the clients'. Starts CourierTestServer twice on 127.0.0.1, plain and with TLS
/// (the `.valid` chain of a fresh test CA, HTTP/2 offered by ALPN beside HTTP/1.1; the WebSocket
/// clients ask for HTTP/1.1), writes the CA's root to `--scratch`, prints a ``ServerReady`` line,
/// then answers each `stats` line on stdin with a ``ServerStats`` line, and stops when stdin ends.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the echo servers (plain and TLS) until stdin ends; `run` starts it."
    )

    @Option(help: "Where the test CA's root certificate (PEM) is written.")
    var scratch = "/tmp/courier-ws-bench"

    func run() async throws {
        let plain = try await TestServer.start()
        let tls = try await TestServer.start(.init(tls: .valid))
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let caPath = "\(scratch)/test-ca-\(getpid()).pem"
        try tls.certificateAuthority.rootCertificatePEM.write(toFile: caPath, atomically: true, encoding: .utf8)
        let path = "/ws/echo?deflate=off"
        emitLine(
            ServerReady(
                echoURL: "ws://127.0.0.1:\(plain.port)\(path)",
                tlsEchoURL: "wss://localhost:\(tls.port)\(path)",
                caPEMPath: caPath
            ))

        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                while let line = readLine() {
                    guard line == "stats" else { continue }
                    let closes = plain.webSocketClosesReceived + tls.webSocketClosesReceived
                    let normal = closes.filter { $0 == 1000 }.count
                    emitLine(
                        ServerStats(
                            connections: plain.connectionsAccepted + tls.connectionsAccepted,
                            normalCloses: normal,
                            otherCloses: closes.count - normal
                        ))
                }
                continuation.resume()
            }
        }
        try? await plain.shutdown()
        try? await tls.shutdown()
        try? FileManager.default.removeItem(atPath: caPath)
    }
}
