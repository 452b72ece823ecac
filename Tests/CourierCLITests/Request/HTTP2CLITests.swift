import CourierTestServer
import Foundation
import Testing

/// HTTP/2 in the CLI: the status line, the `--verbose` waterfall, `--http1.1`.
@Suite("courier HTTP/2")
struct HTTP2CLITests {
    @Test("over TLS the test server speaks h2: `HTTP/2 200`, `h2` in the waterfall; --http1.1 forces HTTP/1.1")
    func statusLineAndWaterfall() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let url = server.baseURL.absoluteString + "/get"
            let ca = try TLSCLITests.rootCAFile().path
            let h2 = try await CourierProcess.run(["--verify", ca, "-h", url])
            #expect(h2.status == 0, "\(h2)")
            #expect(h2.output.hasPrefix("HTTP/2 200 OK"), "\(h2)")
            let verbose = try await CourierProcess.run(["--verify", ca, "-v", url])
            #expect(verbose.output.contains("; h2 TLSv1.3"), "\(verbose)")
            let http11 = try await CourierProcess.run(["--verify", ca, "--http1.1", "-h", url])
            #expect(http11.output.hasPrefix("HTTP/1.1 200 OK"), "\(http11)")
        }
    }
}
