import CourierEngine
import CourierTestServer
import Foundation
import Testing

@testable import courier

/// An HTTP/2 protocol violation is exit 1 with a message naming the violation and who ended the
/// stream, never a source file or line and never "the connection was lost".
@Suite("courier HTTP/2 violations")
struct HTTP2ViolationCLITests {
    @Test("a violation Courier detected: exit 1, 'Courier reset the HTTP/2 stream: …'")
    func reportOfAViolation() throws {
        let violation = HTTP2ProtocolViolation(
            name: "InvalidFlowControlWindowSize", endedBy: .courier, scope: .stream, errorCode: "FLOW_CONTROL_ERROR",
            reason: "a WINDOW_UPDATE took the stream's send window past 2^31-1")
        let url = try #require(URL(string: "https://example.com/"))
        let report = FailureReport(EngineError.http2ProtocolViolation(violation), url: url, timeout: nil, maximumRedirects: 30)
        #expect(report.status == .error)
        #expect(report.message.hasPrefix("Courier reset the HTTP/2 stream: a WINDOW_UPDATE"), "\(report.message)")
    }

    @Test("a 1 MiB HTTP/2 header block: exit 1, Courier named as the party that refused it, no source location")
    func hugeHeaderBlock() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let ca = try TLSCLITests.rootCAFile().path
            let run = try await CourierProcess.run(["--verify", ca, server.baseURL.absoluteString + "/h2/huge-header?bytes=1048576"])
            #expect(run.status == 1, "\(run)")
            #expect(run.errors.hasPrefix("courier: error: Courier "), "\(run)")
            #expect(!run.errors.contains("closed the connection before responding"), "\(run)")
            #expect(!run.errors.contains(".swift") && !run.errors.contains("location"), "\(run)")
        }
    }
}
