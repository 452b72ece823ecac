#if os(Linux)  // network namespaces, rtnetlink and ip(8) are Linux's
import Foundation
import Testing

/// `courier --wait-for-network SECONDS` end to end: `courier serve` runs in one network
/// namespace and the client in another (`ip netns exec`, so every socket of the client, its
/// reachability monitor's included, lives there), joined by a veth pair. The test takes the
/// client's route to the server away, starts the request, and brings the route back once the
/// client says it is waiting.
@Suite(.serialized) struct WaitForNetworkCLITests {
    static let serverAddress = "10.201.0.1"
    static let waitingLine = "courier: the network is unreachable; waiting up to 20 s for a route to \(serverAddress)"
    static let retryLine = "courier: the network is back; sending the request again"

    /// Two namespaces joined by v0 (client, 10.201.0.2/24) and v1 (server, 10.201.0.1/24), and
    /// `courier serve` listening on the server's side; `body` gets the client's namespace and the
    /// server's base URL. The server is stopped and the namespaces removed afterwards.
    func withServer(_ body: (CLINetworkNamespace, String) async throws -> Void) async throws {
        let client = try CLINetworkNamespace.make()
        defer { client.remove() }
        let server = try CLINetworkNamespace.make()
        defer { server.remove() }
        client.ip("link", "add", "v0", "type", "veth", "peer", "name", "v1", "netns", server.name)
        client.ip("addr", "add", "10.201.0.2/24", "dev", "v0")
        client.ip("link", "set", "v0", "up")
        server.ip("addr", "add", "\(Self.serverAddress)/24", "dev", "v1")
        server.ip("link", "set", "v1", "up")
        let serve = try server.startCourier(["serve", "--port", "0", "--host", Self.serverAddress])
        do {
            try await serve.waitForLines(1)
            let prefix = "Courier test server listening on "
            let line = try #require(serve.lines.first { $0.hasPrefix(prefix) }, "\(serve.lines) \(serve.errors)")
            try await body(client, String(line.dropFirst(prefix.count)))
        } catch {
            Issue.record(error)
        }
        _ = await serve.terminate()
    }

    @Test("no route: the GET waits, the route comes back, the GET is sent again and succeeds")
    func waitsForTheRouteThenRetries() async throws {
        try await withServer { client, baseURL in
            client.ip("route", "del", "10.201.0.0/24", "dev", "v0")
            let get = try client.startCourier(["--wait-for-network", "20", "GET", "\(baseURL)/get"])
            // The first attempt failed (no route) and reachability said so: bring the route back.
            try await get.waitForErrors(containing: Self.waitingLine)
            client.ip("route", "add", "10.201.0.0/24", "dev", "v0")
            let status = await get.waitForExit()
            #expect(status == 0, "\(get.errors)")
            let echo = try JSONSerialization.jsonObject(with: Data(get.output.utf8)) as? [String: Any]
            #expect(echo?["url"] as? String == "\(baseURL)/get", "\(get.output)")
            // Two attempts: one wait, one retry.
            #expect(get.errors.components(separatedBy: Self.waitingLine).count == 2, "\(get.errors)")
            #expect(get.errors.components(separatedBy: Self.retryLine).count == 2, "\(get.errors)")
        }
    }

    @Test("without the option, or for a POST, no route fails at once with exit status 7")
    func noWaitWithoutTheOptionOrForAPost() async throws {
        try await withServer { client, baseURL in
            client.ip("route", "del", "10.201.0.0/24", "dev", "v0")
            let plain = try await client.runCourier(["GET", "\(baseURL)/get"])
            #expect(plain.status == 7, "\(plain)")
            let post = try await client.runCourier(["--wait-for-network", "20", "POST", "\(baseURL)/post", "a=b"])
            #expect(post.status == 7, "\(post)")
            #expect(!post.errors.contains("waiting up to"), "\(post)")
        }
    }

    @Test("--max-time bounds the wait: no route comes, the wait ends and the connect failure stands")
    func maxTimeBoundsTheWait() async throws {
        try await withServer { client, baseURL in
            client.ip("route", "del", "10.201.0.0/24", "dev", "v0")
            // Without the bound the wait (600 s) outlasts the child's 60 s watchdog.
            let run = try await client.runCourier(["--max-time", "1", "--wait-for-network", "600", "GET", "\(baseURL)/get"])
            #expect(run.status == 7, "\(run)")
            #expect(run.errors.contains("courier: the network is unreachable; waiting up to 1 s for a route to \(Self.serverAddress)"), "\(run)")
            #expect(!run.errors.contains(Self.retryLine), "\(run)")
        }
    }

    @Test("courier request --help describes the option")
    func help() async throws {
        let run = try await CourierProcess.run(["request", "--help"])
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("--wait-for-network <seconds>"), "\(run.output)")
    }

    @Test("with the route there, a server error is not waited on")
    func serverErrorIsNotWaitedOn() async throws {
        try await withServer { client, baseURL in
            let run = try await client.runCourier(["--check-status", "--wait-for-network", "20", "GET", "\(baseURL)/status/503"])
            #expect(run.status == 5, "\(run)")
            #expect(!run.errors.contains("waiting up to"), "\(run)")
        }
    }

    @Test("a value that is not a number of seconds above 0 is a usage error", arguments: ["0", "-1", "nan"])
    func invalidValue(value: String) async throws {
        let run = try await CourierProcess.run(["--wait-for-network", value, "GET", "http://127.0.0.1:1/get"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--wait-for-network"), "\(run)")
    }
}

extension NamespacedChild {
    /// Waits (hang bound 20 s) until stderr holds `text`.
    func waitForErrors(containing text: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let end = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < end {
            if errors.contains(text) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("expected \(text) on stderr within 20 s; stderr: \(errors); stdout: \(output)", sourceLocation: sourceLocation)
    }
}
#endif
