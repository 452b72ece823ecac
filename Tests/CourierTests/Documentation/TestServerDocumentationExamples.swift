import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The examples of the "Testing with CourierTestServer" article.
@Suite("Documentation: Testing with CourierTestServer")
struct TestServerDocumentationExamples {
    @Test("a test against a real server on loopback")
    func echo() async throws {
        try await TestServer.withRunning { server in                  // http://127.0.0.1:<free port>
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let (object, response) = try await manager.get("get", parameters: ["q": "swift"])
            #expect(response.statusCode == 200)
            #expect((object as? JSONValue)?["args"]?["q"] == "swift")
            #expect(server.requestsReceived(forPath: "/get") == 1)
        }                                                             // stopped, every connection closed
    }

    @Test("HTTPS with a generated certificate authority")
    func https() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionConfiguration()
            configuration.tls.additionalTrustRootsDER = [server.certificateAuthority.rootCertificateDER]
            let manager = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(server.port)"), configuration: configuration)
            let (_, response) = try await manager.get("get")
            #expect(response.statusCode == 200)
            let expired = try await TestServer.start(.init(tls: .expired))   // or .wrongHost, .selfSigned, ...
            defer { Task { try await expired.shutdown() } }
            let stale = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(expired.port)"), configuration: configuration)
            await #expect(throws: CourierError.self) { _ = try await stale.get("get") }
        }
    }

    @Test("faults on purpose")
    func faults() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.responseSerializer = HTTPResponseSerializer()
            // The server promises 100 bytes, sends 10 and closes: the task fails, it never hangs.
            await #expect(throws: CourierError.self) {
                _ = try await manager.get("fault/short-body?length=100&sent=10")
            }
        }
    }
}
