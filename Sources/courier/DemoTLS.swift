import Courier
import CourierTestServer
import Foundation

/// The demo's TLS step: the test server's certificate accepted, and a wrong one rejected.
struct DemoTLS: Sendable {
    static let stepTitle = "HTTPS: the test CA trusted, a certificate for another host rejected"

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
        let configuration = Self.trustingTestCA(servers.https.certificateAuthority)
        output.detail("trust roots: the test CA only (SessionConfiguration.tls.additionalTrustRootsDER)")

        let good = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(servers.https.port)"), configuration: configuration)
        output.detail("GET https://localhost:\(servers.https.port)/get  (certificate for localhost, issued by the test CA)")
        let (_, response) = try await good.get("get")
        try DemoSteps.check(response.statusCode == 200, "expected 200, got \(response.statusCode)")
        output.ok("accepted: \(response.statusCode)")

        let bad = HTTPSessionManager(baseURL: URL(string: "https://localhost:\(servers.wrongHost.port)"), configuration: configuration)
        output.detail("GET https://localhost:\(servers.wrongHost.port)/get  (certificate for wrong.host.example, same CA)")
        do {
            _ = try await bad.get("get")
            throw DemoFailure("the certificate for another host was accepted")
        } catch CourierError.serverTrustRejected(let host, let reason) {
            output.ok("rejected: \(CourierError.serverTrustRejected(host: host, reason: reason).description)")
        }
        good.invalidateSessionCancelingTasks(false, resetSession: false)
        bad.invalidateSessionCancelingTasks(false, resetSession: false)
    }
}
