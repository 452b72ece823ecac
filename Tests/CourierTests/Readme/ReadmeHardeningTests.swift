import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Limits and credentials: a Digest-only credential, a body-size limit for data tasks and
/// streamed reads of any size, against the test server.
@Suite("README limits and hostile input")
struct ReadmeHardeningTests {
    @Test func readmeLimitsExample() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.cookieJar = HTTPCookieJar()
            configuration.maximumResponseBodySize = 8 << 20
            let manager = URLSessionManager(configuration: configuration)
            manager.credential = URLCredential(user: "ada", password: "secret", persistence: .forSession)
            manager.credentialSchemes = .digest

            // Digest is answered; a Basic-only challenge gets no password (the 401 is the result).
            let digest = try await manager.data(for: URLRequest(url: server.sessionURL("/digest-auth/auth/ada/secret")))
            #expect(digest.response.statusCode == 200)
            let basic = try await manager.bytes(for: URLRequest(url: server.sessionURL("/basic-auth/ada/secret")))
            #expect(basic.0.statusCode == 401)

            // Past the limit a data task fails; the streamed API reads any size chunk by chunk.
            await #expect(throws: CourierError.self) {
                _ = try await manager.data(for: URLRequest(url: server.sessionURL("/download/\(16 << 20)")))
            }
            let (response, body) = try await manager.bytes(for: URLRequest(url: server.sessionURL("/download/\(16 << 20)")))
            var total = 0
            for try await chunk in body { total += chunk.count }
            #expect(response.statusCode == 200)
            #expect(total == 16 << 20)
        }
    }
}
