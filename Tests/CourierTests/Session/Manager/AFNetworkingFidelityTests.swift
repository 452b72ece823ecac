import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Details AFNetworking users rely on, as DESIGN.md's "Session details" gives them.
@Suite("AFNetworking fidelity")
struct AFNetworkingFidelityTests {
    /// AFN raises "Invalid Security Policy" naming the pinning mode; Courier throws the same text.
    @Test(arguments: [(SSLPinningMode.certificate, "certificate"), (.publicKey, "publicKey")])
    func invalidSecurityPolicyNamesTheMode(mode: SSLPinningMode, name: String) throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://api.example.com/v1"))
        let pinned = try Certificate(pemEncoded: TestCertificateAuthority.shared.intermediateCertificatePEM)
        let error = #expect(throws: CourierError.self) {
            try manager.setSecurityPolicy(SecurityPolicy(pinningMode: mode, pinnedCertificates: [pinned]))
        }
        #expect(
            error?.description
                == "Invalid Security Policy: A security policy configured with \(name) pinning can only be applied on a "
                + "manager with a secure base URL (i.e. https)")
        let noBase = HTTPSessionManager()
        #expect(throws: CourierError.self) {
            try noBase.setSecurityPolicy(SecurityPolicy(pinningMode: mode, pinnedCertificates: [pinned]))
        }
    }

    /// `manager.get("")` requests the base URL itself (Linux's Foundation returns nil for
    /// `URL(string: "", relativeTo:)`; AFN on Apple platforms resolves it to the base).
    @Test func emptyPathRequestsTheBaseURL() async throws {
        #expect(BaseURLResolution.resolve("", against: URL(string: "http://h/v1/"))?.absoluteString == "http://h/v1/")
        #expect(BaseURLResolution.resolve("", against: nil) == nil)
        try await TestServer.withRunning { server in
            let base = server.baseURL.appendingPathComponent("anything").appendingPathComponent("root")
            let manager = HTTPSessionManager(baseURL: base)
            let (object, response) = try await manager.get("")
            #expect(response.statusCode == 200)
            #expect(response.url?.absoluteString == base.absoluteString + "/")
            let json = try #require(object as? JSONValue)
            #expect(json["url"]?.stringValue?.hasSuffix("/anything/root/") == true, "\(json)")
        }
    }
}
