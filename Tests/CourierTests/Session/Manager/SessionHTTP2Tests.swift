import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The session layer over HTTP/2 (the test server's HTTPS picks h2): security policy and
/// pinning, redirects and many concurrent tasks on one connection, and the HTTP/1.1-only switch.
@Suite("Session over HTTP/2")
struct SessionHTTP2Tests {
    static var trustingTestCA: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.tls.additionalTrustRootsDER = [(try? TestCertificateAuthority.shared.rootCertificateDER) ?? []]
        return configuration
    }

    static func run(_ manager: URLSessionManager, _ url: URL) async -> CompletionRecorder.Call? {
        let recorder = CompletionRecorder()
        manager.dataTask(with: URLRequest(url: url), completionHandler: recorder.handler).resume()
        await recorder.wait()
        return recorder.first
    }

    static func statuses(_ manager: URLSessionManager, _ url: URL, count: Int) async -> [Int] {
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<count {
                group.addTask { await run(manager, url)?.response?.statusCode ?? -1 }
            }
            var all: [Int] = []
            for await status in group { all.append(status) }
            return all
        }
    }

    @Test func pinnedSessionRunsConcurrentTasksOnOneH2Connection() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let manager = URLSessionManager(configuration: Self.trustingTestCA)
            let leaf = try Certificate(derEncoded: Data(try #require(try TestCertificateAuthority.shared.serverChain(.valid).certificatesDER.first)))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [leaf]))
            let statuses = await Self.statuses(manager, server.sessionURL("/drip?duration=0.2&numbytes=4"), count: 50)
            #expect(statuses == Array(repeating: 200, count: 50))
            // Fifty overlapping tasks, one connection: they were HTTP/2 streams.
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func aWrongPinIsRejectedOverH2() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let manager = URLSessionManager(configuration: Self.trustingTestCA)
            let stranger = try Certificate(
                derEncoded: Data(try #require(try TestCertificateAuthority.shared.serverChain(.selfSigned).certificatesDER.first)))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [stranger]))
            let call = await Self.run(manager, server.sessionURL("/get"))
            guard case .serverTrustRejected = call?.error as? CourierError else {
                Issue.record("expected serverTrustRejected, got \(String(describing: call?.error))")
                return
            }
        }
    }

    @Test func redirectsAndAuthFollowOverH2() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let manager = URLSessionManager(configuration: Self.trustingTestCA)
            let redirected = await Self.run(manager, server.sessionURL("/redirect/3"))
            #expect(redirected?.response?.statusCode == 200)
            #expect(redirected?.response?.url?.path == "/get")
            var request = URLRequest(url: server.sessionURL("/basic-auth/ada/secret"))
            request.setValue("Basic " + Data("ada:secret".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
            let recorder = CompletionRecorder()
            manager.dataTask(with: request, completionHandler: recorder.handler).resume()
            await recorder.wait()
            #expect(recorder.first?.response?.statusCode == 200)
            #expect(server.connectionsAccepted == 1)
        }
    }

    /// The awaited typed calls (run without a TaskDelegate when nothing else is configured)
    /// over HTTP/2: fifty at once share one connection, and a wrong pin still refuses the server.
    @Test func awaitedTypedCallsShareOneH2ConnectionAndHonourPins() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let manager = URLSessionManager(configuration: Self.trustingTestCA)
            let leaf = try Certificate(derEncoded: Data(try #require(try TestCertificateAuthority.shared.serverChain(.valid).certificatesDER.first)))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [leaf]))
            let url = server.sessionURL("/drip?duration=0.2&numbytes=4")
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let response = try? await manager.response(for: URLRequest(url: url), serializer: HTTPResponseSerializer())
                        return response.map { Int($0.status.code) } ?? -1
                    }
                }
                var all: [Int] = []
                for await status in group { all.append(status) }
                return all
            }
            #expect(statuses == Array(repeating: 200, count: 50))
            #expect(server.connectionsAccepted == 1)

            let pinnedElsewhere = URLSessionManager(configuration: Self.trustingTestCA)
            let stranger = try Certificate(
                derEncoded: Data(try #require(try TestCertificateAuthority.shared.serverChain(.selfSigned).certificatesDER.first)))
            try pinnedElsewhere.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [stranger]))
            do {
                _ = try await pinnedElsewhere.response(for: URLRequest(url: server.sessionURL("/get")), serializer: HTTPResponseSerializer())
                Issue.record("a server outside the pins was accepted")
            } catch CourierError.serverTrustRejected {
            } catch {
                Issue.record("expected serverTrustRejected, got \(error)")
            }
        }
    }

    @Test func http1OnlySessionUsesSeveralConnections() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = Self.trustingTestCA
            configuration.httpVersion = .http1Only
            let manager = URLSessionManager(configuration: configuration)
            let statuses = await Self.statuses(manager, server.sessionURL("/drip?duration=0.3&numbytes=4"), count: 12)
            #expect(statuses == Array(repeating: 200, count: 12))
            #expect(server.connectionsAccepted > 1)
        }
    }
}
