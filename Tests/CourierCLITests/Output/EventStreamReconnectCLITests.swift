import CourierTestServer
import Foundation
import Testing

/// `courier --stream --reconnect`: server-sent events resumed with `Last-Event-ID` across
/// dropped connections, each printed once.
@Suite("courier --stream --reconnect")
struct EventStreamReconnectCLITests {
    private static func events(_ numbers: ClosedRange<Int>) -> String {
        numbers.map { "id: \($0)\ndata: event \($0)\n\n" }.joined()
    }

    @Test("prints every event once across connections reset mid-event, and exits 0 on the server's 204")
    func resumesAcrossDrops() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/sse/cli?count=5&per=2&end=drop&retry=0"
            let run = try await CourierProcess.run(["--stream", "--reconnect", url])
            #expect(run.status == 0, "\(run)")
            #expect(run.output == Self.events(1...5), "\(run)")
            #expect(server.requestsReceived(forPath: "/sse/cli") == 4)
        }
    }

    @Test("--reconnect alone implies --stream; heads are printed once per connection with -h -b")
    func reconnectImpliesStream() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString + "/sse/heads?count=2&per=1&retry=0"
            let run = try await CourierProcess.run(["--reconnect", "--print", "hb", url])
            #expect(run.status == 0, "\(run)")
            let heads = run.output.components(separatedBy: "HTTP/1.1 200 OK").count - 1
            #expect(heads == 2, "\(run)")
            #expect(run.output.contains("id: 1\ndata: event 1\n\n"))
            #expect(run.output.hasSuffix("id: 2\ndata: event 2\n\n"), "\(run)")
        }
    }

    @Test("a 404 is not reconnected: an error and exit 1")
    func notFoundStops() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(["--stream", "--reconnect", server.baseURL.absoluteString + "/sse/x?answer=404"])
            #expect(run.status == 1, "\(run)")
            #expect(run.errors.contains("404"), "\(run)")
            #expect(server.requestsReceived(forPath: "/sse/x") == 1)
        }
    }

    @Test("--reconnect with --download is a usage error (exit 2)")
    func refusesDownload() async throws {
        let run = try await CourierProcess.run(["--reconnect", "--download", "http://127.0.0.1:9/sse/x"])
        #expect(run.status == 2, "\(run)")
        #expect(run.errors.contains("--reconnect"), "\(run)")
    }
}
