import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A manager whose configuration can't make an engine (bad TLS material) fails its tasks with
/// that error; it never falls back to an engine without the configured verifier and identity.
@Suite("Engine configuration failure")
struct EngineConfigurationFailureTests {
    /// Trusts the test CA, but with a client identity that is not DER at all.
    static var garbageIdentity: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.tls.additionalTrustRootsDER = [(try? TestCertificateAuthority.shared.rootCertificateDER) ?? []]
        configuration.tls.clientIdentity = .init(certificateChainDER: [Array("not a certificate".utf8)], privateKeyDER: [1, 2, 3])
        return configuration
    }

    /// A trust root that is not a certificate.
    static var garbageRoot: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.tls.additionalTrustRootsDER = [[0x30, 0x03, 0x02, 0x01]]
        return configuration
    }

    static func isConfigurationError(_ error: (any Error)?) -> Bool {
        if case .invalidTLSConfiguration = error as? CourierError { return true }
        return false
    }

    @Test func badClientIdentityWithPinningNeverReachesTheServer() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let manager = URLSessionManager(configuration: Self.garbageIdentity)
            let stranger = try Certificate(derEncoded: Data(try #require(try TestCertificateAuthority.shared.serverChain(.selfSigned).certificatesDER.first)))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [stranger]))
            let recorder = CompletionRecorder()
            manager.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: recorder.handler).resume()
            await recorder.wait()
            let error = recorder.first?.error
            #expect(Self.isConfigurationError(error), "\(String(describing: error))")
            let message = error.map { "\($0)" } ?? ""
            #expect(message.hasPrefix("Invalid TLS configuration: client identity certificate #1 is not a DER certificate"), "\(message)")
            #expect(server.connectionsAccepted == 0)
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.all.count == 1)
        }
    }

    @Test func badTrustRootFailsEveryTaskKindOnceWithoutConnecting() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager(configuration: Self.garbageRoot)
            let data = CompletionRecorder()
            let upload = CompletionRecorder()
            let download = CompletionRecorder()
            manager.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: data.handler).resume()
            manager.uploadTask(with: URLRequest(url: server.sessionURL("/post")), from: Data("x".utf8), completionHandler: upload.handler).resume()
            manager.downloadTask(with: URLRequest(url: server.sessionURL("/bytes/10")), completionHandler: { response, url, error in
                download.handler(response, url, error)
            }).resume()
            await data.wait()
            await upload.wait()
            await download.wait()
            for recorder in [data, upload, download] {
                #expect(Self.isConfigurationError(recorder.first?.error), "\(String(describing: recorder.first?.error))")
                let message = recorder.first?.error.map { "\($0)" } ?? ""
                #expect(message.contains("additional trust root #1"), "\(message)")
            }
            #expect(server.connectionsAccepted == 0)
            try await Task.sleep(for: .milliseconds(100))
            #expect([data, upload, download].map { $0.all.count } == [1, 1, 1])
            try await eventually { manager.tasks.isEmpty }
        }
    }

    @Test func aGoodConfigurationStillWorksNextToABadOne() async throws {
        try await TestServer.withRunning { server in
            let bad = URLSessionManager(configuration: Self.garbageRoot)
            let good = URLSessionManager()
            good.responseSerializer = HTTPResponseSerializer()
            let failed = CompletionRecorder()
            bad.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: failed.handler).resume()
            await failed.wait()
            let succeeded = CompletionRecorder()
            good.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: succeeded.handler).resume()
            await succeeded.wait()
            #expect(Self.isConfigurationError(failed.first?.error))
            #expect(succeeded.first?.error == nil)
            #expect(succeeded.first?.response?.statusCode == 200)
        }
    }
}
