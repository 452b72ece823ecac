import Courier
import CourierTestServer
import Foundation

/// The demo's TLS step: certificate pinning through the session manager's security policy,
/// the pinned certificate accepted and a wrong pin rejected.
struct DemoTLS: Sendable {
    static let stepTitle = "HTTPS with certificate pinning: the right pin accepted, a wrong pin rejected"

    let servers: DemoServers
    let output: DemoOutput

    /// A session configuration that trusts the test CA's root (and not the system roots).
    static func trustingTestCA(_ authority: TestCertificateAuthority) -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [authority.rootCertificateDER]
        return configuration
    }

    func run() async throws {
        let authority = servers.https.certificateAuthority
        let root = try Certificate(derEncoded: Data(authority.rootCertificateDER))
        let intermediate = try Certificate(derEncoded: Data(authority.intermediateCertificateDER))
        guard let otherDER = authority.serverChain(.selfSigned).certificatesDER.first else {
            throw DemoFailure("the test CA has no self-signed certificate")
        }
        let other = try Certificate(derEncoded: Data(otherDER))
        let url = "https://localhost:\(servers.https.port)"

        /// A manager for the HTTPS server that trusts the test root and pins `certificate`.
        func manager(pinning certificate: Certificate) throws -> HTTPSessionManager {
            var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [certificate])
            policy.trustedRootCertificates = [root]
            let manager = HTTPSessionManager(baseURL: URL(string: url))
            try manager.setSecurityPolicy(policy)
            return manager
        }

        let good = try manager(pinning: intermediate)
        output.detail("pinned: the test CA's intermediate (\(intermediate.subjectSummary)), mode .certificate")
        output.detail("GET \(url)/get")
        let (_, response) = try await good.get("get")
        try DemoSteps.check(response.statusCode == 200, "expected 200, got \(response.statusCode)")
        output.ok("accepted: \(response.statusCode), the server's chain contains the pinned certificate")

        let bad = try manager(pinning: other)
        output.detail("pinned: a different, self-signed certificate (\(other.subjectSummary))")
        output.detail("GET \(url)/get")
        do {
            _ = try await bad.get("get")
            throw DemoFailure("the server was trusted with a pin it does not match")
        } catch let error as CourierError {
            guard case .serverTrustRejected = error else { throw error }
            output.ok("rejected: \(error.description)")
        }
        good.invalidateSessionCancelingTasks(false, resetSession: false)
        bad.invalidateSessionCancelingTasks(false, resetSession: false)
    }
}
