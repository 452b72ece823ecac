import CourierTestServer
import Foundation
import Testing

/// `-v` names the connection a request rode when HTTP/2 coalescing put it on another host's.
@Suite("courier HTTP/2 coalescing")
struct CoalescingCLITests {
    @Test("a redirect to another name of the server rides the open connection, and -v says so")
    func verboseNamesTheCoalescedConnection() async throws {
        let server = try await TestServer.start(.init(tls: .valid))
        defer { Task { try await server.shutdown() } }
        let target = "https://127.0.0.1:\(server.port)/get"
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        let url = "https://localhost:\(server.port)/redirect-to?url=\(encoded)"
        let run = try await CourierProcess.run(["-v", "--follow", "--verify", try TLSCLITests.rootCAFile().path, url])
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("reusing connection to localhost (HTTP/2 coalescing"), "\(run)")
    }
}
