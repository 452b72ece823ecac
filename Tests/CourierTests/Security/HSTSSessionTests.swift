@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// HSTS end to end, over TLS to the test server named `localhost` (HSTS never applies to IP
/// literals; the test certificate names localhost): an https response teaches the host, and an
/// `http://` URL with the server's port is then sent over TLS to that same port (curl's rule),
/// in both task shapes and on a redirect; the metrics say so. Nothing is learnt over http.
@Suite("HSTS in a session")
struct HSTSSessionTests {
    static func configuration(_ store: HSTSStore) throws -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        configuration.hsts = store
        return configuration
    }

    static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    @Test func anHTTPSResponseTeachesTheHostAndHTTPIsUpgradedKeepingThePort() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let store = HSTSStore()
            let manager = URLSessionManager(configuration: try Self.configuration(store))
            let port = server.port
            let plain = try Self.url("http://localhost:\(port)/get")
            #expect(store.upgradedURL(for: plain) == nil)

            let teach = try Self.url("https://localhost:\(port)/response-headers?Strict-Transport-Security=max-age%3D600")
            _ = try await manager.data(for: URLRequest(url: teach))
            #expect(store.isKnownHost("localhost"))
            #expect(store.entries.first?.includesSubdomains == false)

            // Awaited (the direct runner): the http URL went over TLS to the same port.
            let (_, response) = try await manager.data(for: URLRequest(url: plain))
            #expect(response.statusCode == 200)
            #expect(response.url?.absoluteString == "https://localhost:\(port)/get")

            // A completion block (the task delegate): the metrics name the URL it came from.
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: plain), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            #expect(recorder.first?.error == nil)
            #expect(recorder.first?.response?.statusCode == 200)
            #expect(task.metrics?.hstsUpgradedFrom == plain)
            #expect(task.metrics?.tlsProtocolVersion != nil)
            #expect(task.currentRequest?.url?.absoluteString == "https://localhost:\(port)/get")
            #expect(task.originalRequest?.url == plain)

            // A redirect to http:// on a known host is upgraded too.
            let redirect = try Self.url(
                "https://localhost:\(port)/redirect-to?url=http%3A%2F%2Flocalhost%3A\(port)%2Fget&status_code=302")
            let (_, redirected) = try await manager.data(for: URLRequest(url: redirect))
            #expect(redirected.url?.absoluteString == "https://localhost:\(port)/get")

            // max-age=0 forgets the host.
            let forget = try Self.url("https://localhost:\(port)/response-headers?Strict-Transport-Security=max-age%3D0")
            _ = try await manager.data(for: URLRequest(url: forget))
            #expect(!store.isKnownHost("localhost"))
        }
    }

    @Test func aPlainHTTPResponseTeachesNothingAndHSTSIsOffByDefault() async throws {
        #expect(SessionConfiguration().hsts == nil)
        try await TestServer.withRunning { server in
            let store = HSTSStore()
            let manager = URLSessionManager(configuration: try Self.configuration(store))
            let url = try Self.url("http://localhost:\(server.port)/response-headers?Strict-Transport-Security=max-age%3D600")
            let (_, response) = try await manager.data(for: URLRequest(url: url))
            #expect(response.statusCode == 200)
            #expect(!store.isKnownHost("localhost"))
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: url), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            #expect(task.metrics?.hstsUpgradedFrom == nil)
        }
    }
}
