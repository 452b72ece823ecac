import ArgumentParser
import CourierTestServer
import Foundation

/// `courier demo`: starts the embedded test server (HTTP and HTTPS) and walks through what
/// Courier's session layer does, step by step. Exits 0 only if every step did what it says.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show Courier at work against its embedded test server (loopback only).",
        discussion: """
            Runs a GET with nested query parameters, a JSON POST, a multipart upload of a \
            generated file, a download, a request that fails validation, TLS with the test CA \
            (accepted, and rejected for the wrong certificate), one request's timing \
            waterfall, and a page of images through ImageDownloader (merged duplicates, \
            image-cache hits, the activity indicator). Exits 0 only if every step did what it says.
            """,
        helpNames: [.short, .long]  // the root's -h is HTTPie's --headers
    )

    @Option(name: .customLong("upload-mib"), help: "Size of the generated file uploaded as a multipart part, in MiB.")
    var uploadMiB: Int = 64

    @Option(name: .customLong("download-mib"), help: "Size of the download, in MiB.")
    var downloadMiB: Int = 64

    func validate() throws {
        guard uploadMiB >= 1, downloadMiB >= 1 else {
            throw ValidationError("--upload-mib and --download-mib must be at least 1.")
        }
    }

    func run() async throws {
        let output = DemoOutput()
        let servers = try await DemoServers.start()
        let workDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-demo-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: workDirectory) }

        output.title(
            "Courier demo: the session layer against the embedded test server at "
                + "\(servers.http.baseURL.absoluteString) and https://localhost:\(servers.https.port) (loopback only)"
        )
        let steps = DemoSteps(servers: servers, output: output, workDirectory: workDirectory)
        let clock = ContinuousClock()
        let started = clock.now
        var failures = 0
        let all = steps.all(uploadMiB: uploadMiB, downloadMiB: downloadMiB)
        for (name, body) in all {
            output.step(name)
            do {
                try await body()
            } catch {
                failures += 1
                output.failure(DemoSteps.userFacing(error))
            }
        }
        try await servers.shutdown()
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if failures > 0 {
            output.title("\(failures) step(s) failed.")
            throw ExitCode(1)
        }
        output.title(String(format: "All %d steps did what they said, in %.1f s.", all.count, seconds))
    }
}

/// The servers the demo talks to: plain HTTP, HTTPS with a valid chain for `localhost`, and
/// HTTPS presenting a certificate for another host.
struct DemoServers: Sendable {
    let http: TestServer
    let https: TestServer
    let wrongHost: TestServer

    static func start() async throws -> DemoServers {
        let http = try await TestServer.start()
        let https = try await TestServer.start(.init(tls: .valid))
        let wrongHost = try await TestServer.start(.init(tls: .wrongHost))
        return DemoServers(http: http, https: https, wrongHost: wrongHost)
    }

    func shutdown() async throws {
        try await wrongHost.shutdown()
        try await https.shutdown()
        try await http.shutdown()
    }
}

/// A step that did not do what it says; the message says what went wrong.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
