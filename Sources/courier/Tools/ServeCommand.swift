import ArgumentParser
import CourierTestServer
import Dispatch
import Foundation

/// `courier serve`: runs the httpbin-compatible test server until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run Courier's httpbin-compatible test server (with fault endpoints) until Ctrl-C.",
        discussion: """
            Endpoints: /get /post /anything /status/{codes} /bytes/{n} /range/{n} /digest-auth/... \
            /fault/... (see Sources/CourierTestServer/README.md). With --tls, the server presents \
            the chosen certificate chain and writes its root CA to a PEM file for curl --cacert \
            (in a temporary directory removed when the server stops on SIGINT or SIGTERM).
            """,
        helpNames: [.short, .long]  // the root's -h is HTTPie's --headers
    )

    @Option(help: "The port to listen on (0 picks a free port).")
    var port: Int = 8080

    @Option(help: "The address to bind (127.0.0.1, ::1, 0.0.0.0, ...).")
    var host: String = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "Serve HTTPS, presenting this certificate chain.",
            valueName: ServerChainKind.allCases.map(\.rawValue).joined(separator: "|")
        )
    )
    var tls: String?

    func validate() throws {
        if let tls, ServerChainKind(rawValue: tls) == nil {
            throw ValidationError(
                "Unknown chain '\(tls)'; use one of: \(ServerChainKind.allCases.map(\.rawValue).joined(separator: ", "))."
            )
        }
        guard (0...65535).contains(self.port) else {
            throw ValidationError("The port must be between 0 and 65535.")
        }
    }

    func run() async throws {
        // Install the handlers before binding, so a signal that arrives early is not lost.
        let signals = TerminationSignals()
        let kind = self.tls.flatMap(ServerChainKind.init(rawValue:))
        let server = try await TestServer.start(.init(host: self.host, port: self.port, tls: kind))
        print("Courier test server listening on \(server.baseURL.absoluteString)")
        var temporaryDirectory: URL?
        defer { if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) } }
        if kind != nil {
            let directory = try Self.makeTemporaryDirectory()
            temporaryDirectory = directory
            let path = try Self.writeCertificateAuthority(server.certificateAuthority.rootCertificatePEM, in: directory)
            print("Root CA certificate (PEM): \(path)  (curl --cacert \(path) \(server.baseURL.absoluteString)/get)")
        }
        fflush(nil)  // the URL must reach a pipe (scripts wait for it) before we block
        let signal = await signals.next()
        print("Received signal \(signal), stopping.")
        try await server.shutdown()
    }

    /// Creates `<temp>/courier-serve-<pid>/`, removed by `run()` when the server stops.
    private static func makeTemporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-serve-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Writes the root CA to `<directory>/root-ca.pem` and returns the path.
    private static func writeCertificateAuthority(_ pem: String, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("root-ca.pem")
        try Data(pem.utf8).write(to: file)
        return file.path
    }
}

/// Delivers SIGINT and SIGTERM through Dispatch sources instead of the default handlers,
/// which would kill the process without shutting the server down.
private struct TerminationSignals {
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let queue = DispatchQueue(label: "courier.serve.signals")
        self.stream = stream
        self.sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    /// Waits for the first signal and returns its number.
    func next() async -> Int32 {
        var iterator = self.stream.makeAsyncIterator()
        let number = await iterator.next() ?? SIGTERM
        for source in self.sources {
            source.cancel()
        }
        return number
    }
}
