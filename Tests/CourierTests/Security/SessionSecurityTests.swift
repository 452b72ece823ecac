import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// The manager's security policy and server-trust block, over real TLS to the test server.
@Suite("Session security")
struct SessionSecurityTests {
    static var authority: TestCertificateAuthority {
        get throws { try TestCertificateAuthority.shared }
    }

    /// A configuration that trusts the test CA next to the system store.
    static var trustingTestCA: SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.tls.additionalTrustRootsDER = [(try? authority.rootCertificateDER) ?? []]
        return configuration
    }

    static func certificate(_ der: [UInt8]) throws -> Certificate { try Certificate(derEncoded: Data(der)) }

    /// Runs GET /get and returns the status code or the error.
    static func get(_ manager: URLSessionManager, _ server: TestServer) async -> Result<Int, any Error> {
        let recorder = CompletionRecorder()
        manager.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: recorder.handler).resume()
        await recorder.wait()
        if let error = recorder.first?.error { return .failure(error) }
        return .success(recorder.first?.response?.statusCode ?? 0)
    }

    /// The status code of GET /get; throws the task's error.
    static func status(_ manager: URLSessionManager, _ server: TestServer) async throws -> Int {
        try await get(manager, server).get()
    }

    static func rejectionReason(_ result: Result<Int, any Error>) -> String? {
        guard case .failure(let error) = result, case .serverTrustRejected(_, let reason, _, _) = error as? CourierError else {
            return nil
        }
        return reason
    }

    @Test func defaultPolicyTrustsTheConfiguredRootAndChecksTheHost() async throws {
        let manager = URLSessionManager(configuration: Self.trustingTestCA)
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let status = try await Self.status(manager, server)
            #expect(status == 200)
        }
        try await TestServer.withRunning(.init(tls: .wrongHost)) { server in
            let result = await Self.get(manager, server)
            let reason = Self.rejectionReason(result)
            #expect(reason?.hasPrefix("host name does not match") == true, "\(reason ?? "no rejection")")
            if case .failure(let error) = result {
                #expect("\(error)".hasPrefix("The certificate for this server is invalid. You might be connecting to a server that is pretending to be “\(server.baseURL.host ?? "")”"))
            }
        }
    }

    @Test func certificatePinAcceptsTheRightChainAndRejectsAWrongPin() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let manager = URLSessionManager(configuration: Self.trustingTestCA)
            let intermediate = try Self.certificate(try Self.authority.intermediateCertificateDER)
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate]))
            let status = try await Self.status(manager, server)
            #expect(status == 200)

            let stranger = try Self.certificate(try #require(try Self.authority.serverChain(.selfSigned).certificatesDER.first))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [stranger]))
            // A new policy means new connections: the one trusted a moment ago is not reused.
            let reason = Self.rejectionReason(await Self.get(manager, server))
            #expect(reason?.contains("pinned") == true, "\(reason ?? "no rejection")")
        }
    }

    @Test func publicKeyPinOnTheLeaf() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let manager = URLSessionManager(configuration: Self.trustingTestCA)
            let leaf = try Self.certificate(try #require(try Self.authority.serverChain(.valid).certificatesDER.first))
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [leaf]))
            let status = try await Self.status(manager, server)
            #expect(status == 200)
        }
    }

    @Test func selfSignedServerNeedsItsCertificatePinned() async throws {
        try await TestServer.withRunning(.init(tls: .selfSigned)) { server in
            let manager = URLSessionManager()
            #expect(Self.rejectionReason(await Self.get(manager, server)) != nil)
            let selfSigned = try Self.certificate(try #require(try Self.authority.serverChain(.selfSigned).certificatesDER.first))
            var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [selfSigned])
            policy.allowInvalidCertificates = true
            try manager.setSecurityPolicy(policy)
            let status = try await Self.status(manager, server)
            #expect(status == 200)
        }
    }

    @Test func serverTrustBlockDecidesBeforeThePolicy() async throws {
        try await TestServer.withRunning(.init(tls: .selfSigned)) { server in
            let manager = URLSessionManager()
            let seen = Mutex<(String, Int)?>(nil)
            manager.setServerTrustChallengeBlock { challenge in
                seen.withLock { $0 = (challenge.host, challenge.certificateChain.count) }
                return .trust
            }
            let status = try await Self.status(manager, server)
            #expect(status == 200)
            #expect(seen.withLock { $0?.0 } == server.baseURL.host)
            #expect((seen.withLock { $0?.1 } ?? 0) >= 1)

            manager.setServerTrustChallengeBlock { _ in .reject(reason: "not this one") }
            #expect(Self.rejectionReason(await Self.get(manager, server)) == "not this one")

            manager.setServerTrustChallengeBlock { _ in .performDefaultHandling }
            #expect(Self.rejectionReason(await Self.get(manager, server)) != nil)
        }
    }

    @Test func pinningNeedsAnHTTPSBaseURL() throws {
        let pinned = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [])
        #expect(throws: CourierError.self) { try HTTPSessionManager(baseURL: URL(string: "http://example.com/v1")).setSecurityPolicy(pinned) }
        #expect(throws: CourierError.self) { try HTTPSessionManager().setSecurityPolicy(pinned) }
        try HTTPSessionManager(baseURL: URL(string: "https://example.com/v1")).setSecurityPolicy(pinned)
        try HTTPSessionManager(baseURL: URL(string: "http://example.com")).setSecurityPolicy(.default)
        try URLSessionManager().setSecurityPolicy(pinned)
        let error = #expect(throws: CourierError.self) {
            try HTTPSessionManager(baseURL: URL(string: "http://example.com")).setSecurityPolicy(pinned)
        }
        #expect(error?.description.contains("can only be applied on a manager with a secure base URL (i.e. https)") == true, "\(String(describing: error))")
    }

    // MARK: - Hostile chains over real TLS

    /// A manager trusting the test CA and `others` next to the system store.
    static func trusting(_ others: [[UInt8]]) throws -> URLSessionManager {
        var configuration = SessionConfiguration()
        configuration.tls.additionalTrustRootsDER = [try authority.rootCertificateDER] + others
        return URLSessionManager(configuration: configuration)
    }

    /// Runs `body` against a TLS server presenting `chain` (as its `.valid` chain).
    static func withServer(presenting chain: ServerChain, _ body: (TestServer) async throws -> Void) async throws {
        let presenting = try authority.presenting(chain, as: .valid)
        try await TestServer.withRunning(.init(tls: .valid, certificateAuthority: presenting), body)
    }

    /// An attacker with a valid certificate for the host from another trusted CA appends the
    /// victim's genuine leaf: the public-key pin on that leaf must not match it.
    @Test func publicKeyPinRejectsAnAttackerChainCarryingTheVictimsCertificate() async throws {
        let attacker = try TestCertificateAuthority.generate()
        let victimChain = try Self.authority.serverChain(.valid).certificatesDER
        let hostile = HostileCertificates.appending(victimChain, to: attacker.serverChain(.valid))
        let manager = try Self.trusting([attacker.rootCertificateDER])
        try manager.setSecurityPolicy(SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try Self.certificate(victimChain[0])]))
        try await Self.withServer(presenting: hostile) { server in
            let result = await Self.get(manager, server)
            #expect(Self.rejectionReason(result) == "no public key in the chain matches a pinned key", "\(result)")
        }
        // The genuine server still passes with the same manager and pin.
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let status = try await Self.status(manager, server)
            #expect(status == 200)
        }
    }

    /// With `allowInvalidCertificates`, a self-signed leaf followed by the victim's chain: only
    /// certificates linked to the leaf by signature count, so the pin doesn't match.
    @Test func allowInvalidPublicKeyPinRejectsASelfSignedLeafCarryingTheVictimsChain() async throws {
        let attacker = try TestCertificateAuthority.generate()
        let victimChain = try Self.authority.serverChain(.valid).certificatesDER
        let hostile = HostileCertificates.appending(victimChain, to: attacker.serverChain(.selfSigned))
        let manager = URLSessionManager()
        for pinned in victimChain {
            var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try Self.certificate(pinned)])
            policy.allowInvalidCertificates = true
            try manager.setSecurityPolicy(policy)
            try await Self.withServer(presenting: hostile) { server in
                let result = await Self.get(manager, server)
                #expect(Self.rejectionReason(result) == "no public key in the chain matches a pinned key", "\(result)")
            }
        }
    }

    /// A server whose chain runs through an X.509 version 1 intermediate (no basic constraints)
    /// is refused, as curl refuses it, unless the policy opts in to legacy issuers.
    @Test func version1IntermediateIsRefusedOverTLSUnlessLegacyIssuersAreAllowed() async throws {
        let legacy = try HostileCertificates.hierarchy(version1: .intermediate)
        let manager = try Self.trusting([legacy.rootCertificateDER])
        try await Self.withServer(presenting: legacy.serverChain) { server in
            let reason = Self.rejectionReason(await Self.get(manager, server))
            #expect(reason?.hasPrefix("certificate chain is invalid: ") == true, "\(reason ?? "no rejection")")
            #expect(reason?.contains("X.509 version 1") == true, "\(reason ?? "no rejection")")

            var policy = SecurityPolicy.default
            policy.allowsLegacyV1Issuers = true
            try manager.setSecurityPolicy(policy)
            let status = try await Self.status(manager, server)
            #expect(status == 200)
        }
    }
}

/// The README's pinning, resume and progress examples, against the test server.
@Suite("README session extras")
struct ReadmeSessionExtrasTests {
    @Test func readmeExamples() async throws {
        // Pinning: a pinning policy on an https manager is accepted (and refused without https).
        let caPEM = try TestCertificateAuthority.shared.rootCertificatePEM
        let ca = try Certificate(pemEncoded: caPEM)
        let api = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1"))
        try api.setSecurityPolicy(SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [ca]))
        #expect(api.securityPolicy.pinningMode == .certificate)

        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.responseSerializer = HTTPResponseSerializer()
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-readme-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: destination) }
            let finished = CompletionRecorder()
            manager.setTaskDidCompleteBlock { task, error in
                if task.originalRequest?.value(forHTTPHeaderField: "Range") != nil { finished.handler(nil, nil, error) }
            }
            let download = manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/range/102400?duration=10&chunk_size=1024")))
            download.resume()
            try await eventually { download.countOfBytesReceived > 0 }
            download.cancel(byProducingResumeData: { resumeData in
                guard var resumeData else { return }
                resumeData.request.url = server.sessionURL("/range/102400")
                manager.downloadTask(withResumeData: resumeData, destination: { _, _ in destination }).resume()
            })
            await finished.wait()
            #expect(finished.first?.error == nil)
            #expect(try Data(contentsOf: destination) == DownloadResumeTests.rangeBytes(102_400))

            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/bytes/65536")))
            task.resume()
            var last = 0.0
            for await progress in task.progressUpdates(.download) { last = progress.fractionCompleted }
            #expect(last == 1)
        }
    }
}
