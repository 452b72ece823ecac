import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The examples of the "Security and Pinning" article, run against the in-process test server
/// over TLS, with the certificate authority it generates.
@Suite("Documentation: Security and Pinning")
struct SecurityDocumentationExamples {
    @Test("pinning a certificate of the chain: the right pin accepted, a wrong one rejected")
    func pinning() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            let authority = server.certificateAuthority
            // Load certificates from DER or PEM (Certificate.certificates(inDirectory:) reads a folder of .cer/.crt/.pem/.der).
            let root = try Certificate(derEncoded: Data(authority.rootCertificateDER))
            let intermediate = try Certificate(pemEncoded: authority.intermediateCertificatePEM)

            // Pin the intermediate CA; trust this private root instead of the system's store.
            var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate])
            policy.trustedRootCertificates = [root]
            let manager = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(server.port)"))
            try manager.setSecurityPolicy(policy)   // throws for a pinning policy on an http base URL
            let (_, response) = try await manager.get("get")
            print(response.statusCode)   // 200

            // A pin the chain does not contain: the task fails before any byte of the request is sent.
            guard let strangerDER = authority.serverChain(.selfSigned).certificatesDER.first else { return }
            let stranger = try Certificate(derEncoded: Data(strangerDER))
            var wrong = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [stranger])
            wrong.trustedRootCertificates = [root]
            try manager.setSecurityPolicy(wrong)
            do {
                _ = try await manager.get("get")
            } catch CourierError.serverTrustRejected(_, let reason, _, _) {
                print(reason)   // no public key in the chain matches a pinned key
            }

            #expect(response.statusCode == 200)
            await #expect(throws: CourierError.self) { _ = try await manager.get("get") }
            #expect(server.requestsReceived(forPath: "/get") == 1)
        }
    }

    @Test("evaluating a chain without a connection")
    func evaluate() async throws {
        let authority = try TestCertificateAuthority.shared
        let chain = try authority.serverChain(.valid).certificatesDER.map { try Certificate(derEncoded: Data($0)) }
        let root = try Certificate(derEncoded: Data(authority.rootCertificateDER))

        var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [root])
        policy.trustedRootCertificates = [root]
        let trusted = await policy.evaluate(serverChain: chain, forDomain: "localhost")
        let expired = await policy.evaluate(serverChain: chain, forDomain: "localhost", at: Date().addingTimeInterval(20 * 365 * 86_400))
        print(trusted, expired)   // true false

        #expect(trusted)
        #expect(!expired)
    }
}
