import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The session-layer example of the "HTTP/2 and the Engine" article, against the in-process
/// test server over TLS (which offers h2 and http/1.1 by ALPN).
@Suite("Documentation: HTTP/2")
struct HTTP2DocumentationExamples {
    @Test("HTTP/2 when the server offers it, metrics say which")
    func http2() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionConfiguration()
            configuration.httpVersion = .automatic                 // the default: h2 when negotiated, else HTTP/1.1
            // configuration.httpVersion = .http1Only              // never offer h2
            configuration.tls.additionalTrustRootsDER = [server.certificateAuthority.rootCertificateDER]
            let manager = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(server.port)"), configuration: configuration)
            let result = try await manager.get("json", serializer: JSONResponseSerializer())
            print(result.metrics?.networkProtocolName ?? "-")      // h2

            #expect(result.metrics?.networkProtocolName == "h2")
        }
    }
}
