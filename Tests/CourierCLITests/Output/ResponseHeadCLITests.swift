import CourierTestServer
import Foundation
import Testing

/// The response head is printed as received: wire order, repeated fields repeated, the
/// server's HTTP version and reason phrase.
@Suite("courier prints the response head as received")
struct ResponseHeadCLITests {
    @Test func repeatedFieldsStaySeparateInWireOrder() async throws {
        try await TestServer.withRunning { server in
            let url = server.baseURL.absoluteString
            let cookies = try await CourierProcess.run(["-p", "h", url + "/cookies/set?a=1&b=2"])
            #expect(cookies.status == 0, "\(cookies)")
            #expect(cookies.output.contains("\nSet-Cookie: a=1; Path=/\nSet-Cookie: b=2; Path=/\n"), "\(cookies)")
            let run = try await CourierProcess.run(["-p", "h", url + "/response-headers?Zeta=1&Alpha=2&Zeta=3"])
            #expect(run.status == 0, "\(run)")
            let lines = run.output.split(separator: "\n").map(String.init)
            #expect(Array(lines.prefix(5)) == [
                "HTTP/1.1 200 OK", "Content-Type: application/json", "Zeta: 1", "Alpha: 2", "Zeta: 3",
            ], "\(run)")
            #expect(lines.count > 5 && lines[5].hasPrefix("Content-Length: "), "\(run)")
        }
    }

    @Test func theServersHTTPVersionIsShown() async throws {
        try await TestServer.withRunning { server in
            let run = try await CourierProcess.run(
                ["-p", "h", server.baseURL.absoluteString + "/fault/close-delimited?bytes=10&version=1.0"])
            #expect(run.status == 0, "\(run)")
            #expect(run.output.hasPrefix("HTTP/1.0 200 OK\n"), "\(run)")
        }
    }

    @Test func theServersReasonPhraseIsShown() async throws {
        let server = try await HostileServer.start(
            .answer(status: "200 Fine Thanks", headers: ["Content-Length: 2", "X-B: 1", "x-a: 2"], body: "ok"))
        defer { Task { try await server.shutdown() } }
        let run = try await CourierProcess.run(["-p", "h", "http://127.0.0.1:\(server.port)/"])
        #expect(run.status == 0, "\(run)")
        #expect(run.output.hasSuffix("\nContent-Length: 2\nX-B: 1\nx-a: 2\n\n"), "names as sent, in order: \(run)")
        #expect(run.output.hasPrefix("HTTP/1.1 200 Fine Thanks\n"), "\(run)")
    }
}
