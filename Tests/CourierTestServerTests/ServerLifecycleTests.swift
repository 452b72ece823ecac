import CourierTestServer
import Foundation
import Testing

@Suite("Starting and stopping servers")
struct ServerLifecycleTests {
    @Test("starts on an ephemeral IPv4 port and answers")
    func startsOnIPv4() async throws {
        let server = try await TestServer.start()
        #expect(server.port > 0)
        #expect(server.host == "127.0.0.1")
        #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
        let response = try await server.request("/get")
        #expect(response.status == 200)
        #expect(server.connectionsAccepted == 1)
        #expect(server.requestsReceived == 1)
        try await server.shutdown()
        // A stopped server accepts nothing more. (The port itself may already belong to a server
        // another suite started meanwhile, so a connection there proves nothing either way.)
        _ = try? await RawHTTPClient.exchange(port: server.port, "GET /get HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(server.connectionsAccepted == 1)
        #expect(server.requestsReceived == 1)
    }

    @Test("serves over IPv6 on ::1")
    func servesIPv6() async throws {
        try await TestServer.withRunning(.init(host: "::1")) { server in
            #expect(server.baseURL.absoluteString == "http://[::1]:\(server.port)")
            let response = try await server.request("/get?x=1")
            #expect(response.status == 200)
            #expect(response.string("origin") == "::1")
            #expect(response.string("url") == "http://[::1]:\(server.port)/get?x=1")
        }
    }

    @Test("many servers run at once, each on its own port")
    func manyServers() async throws {
        let servers = try await withThrowingTaskGroup(of: TestServer.self) { group in
            for _ in 0..<20 {
                group.addTask { try await TestServer.start() }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(servers.map(\.port)).count == 20)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for server in servers {
                group.addTask { try await server.request("/status/204").status }
            }
            for try await status in group {
                #expect(status == 204)
            }
        }
        for server in servers {
            try await server.shutdown()
        }
    }

    @Test("servers start, answer and stop back to back; shutdown is idempotent")
    func startAndStopRepeatedly() async throws {
        // Speed is measured in Benchmarks/, not here: this checks that cycles leave nothing behind.
        for _ in 0..<10 {
            let server = try await TestServer.start()
            let response = try await server.request("/status/204")
            #expect(response.status == 204)
            try await server.shutdown()
            try await server.shutdown()  // idempotent
        }
    }

    @Test("shutdown closes stalled connections and does not hang")
    func shutdownClosesStalledConnections() async throws {
        let server = try await TestServer.start()
        let pending = Task {
            try await server.exchange("/fault/no-response", timeout: 20)
        }
        // Wait until the request has arrived.
        for _ in 0..<200 where server.requestsReceived == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(server.requestsReceived == 1)
        let clock = ContinuousClock()
        let elapsed = try await clock.measure { try await server.shutdown() }
        // Generous: this catches a hang, not a slow machine.
        #expect(elapsed < .seconds(10))
        let exchange = try await pending.value
        #expect(exchange.end == .closed)
        #expect(exchange.bytes.isEmpty)
    }

    @Test("keeps connections alive across requests")
    func keepAlive() async throws {
        try await TestServer.withRunning { server in
            let request = "GET /get?n=1 HTTP/1.1\r\nHost: a\r\n\r\nGET /get?n=2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
            let exchange = try await RawHTTPClient.exchange(port: server.port, request)
            #expect(exchange.end == .closed)
            #expect(exchange.text.components(separatedBy: "HTTP/1.1 200 OK").count == 3)
            #expect(exchange.text.contains("\"n\" : \"2\""))
            #expect(server.connectionsAccepted == 1)
            #expect(server.requestsReceived == 2)
        }
    }

    @Test("a server released without shutdown closes its listening socket")
    func releasedWithoutShutdown() async throws {
        var server: TestServer? = try await TestServer.start()
        let port = try #require(server?.port)
        let response = try await server?.request("/get")
        #expect(response?.status == 200)
        server = nil
        // The close is asynchronous; give the event loop a moment.
        var refused = false
        for _ in 0..<100 where !refused {
            try await Task.sleep(for: .milliseconds(10))
            refused = (try? await RawHTTPClient.exchange(port: port, "GET / HTTP/1.1\r\n\r\n", timeout: 1)) == nil
        }
        #expect(refused)
    }
}
