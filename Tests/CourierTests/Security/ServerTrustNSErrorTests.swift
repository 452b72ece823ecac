import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `CourierError` bridged to `NSError` as AFNetworking's errors are: a rejected certificate is
/// `NSURLErrorDomain` −1202 with Apple's text, the failing URL, its string and the chain the
/// server presented (over real TLS to the test server); the other cases carry URLSession's codes.
@Suite("CourierError as NSError")
struct ServerTrustNSErrorTests {
    @Test(arguments: [ServerChainKind.wrongHost, .selfSigned])
    func aRejectedCertificateIsNSURLErrorServerCertificateUntrusted(_ kind: ServerChainKind) async throws {
        let manager = URLSessionManager(configuration: SessionSecurityTests.trustingTestCA)
        try await TestServer.withRunning(.init(tls: kind)) { server in
            let url = server.sessionURL("/get")
            let result = await SessionSecurityTests.get(manager, server)
            guard case .failure(let error) = result else {
                Issue.record("expected a trust failure, got \(result)")
                return
            }
            let nsError = error as NSError
            #expect(nsError.domain == NSURLErrorDomain)
            #expect(nsError.code == -1202)
            let host = try #require(url.host)
            #expect(
                nsError.localizedDescription
                    == "The certificate for this server is invalid. You might be connecting to a server that is pretending to be "
                    + "“\(host)” which could put your confidential information at risk.")
            #expect(nsError.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
            #expect(nsError.userInfo[CourierError.failingURLStringErrorKey] as? String == url.absoluteString)
            let presented = try SessionSecurityTests.authority.serverChain(kind).certificatesDER.map(SessionSecurityTests.certificate)
            let chain = nsError.userInfo[CourierError.peerCertificateChainErrorKey] as? [Courier.Certificate]
            #expect(chain == presented)
            #expect(!presented.isEmpty)
            // The same values on the Swift side.
            guard case .serverTrustRejected(_, _, let failingURL, let certificates) = error as? CourierError else {
                Issue.record("expected CourierError.serverTrustRejected, got \(error)")
                return
            }
            #expect(failingURL == url)
            #expect(certificates == presented)
        }
    }

    @Test func otherCasesCarryURLSessionsCodes() throws {
        let url = try #require(URL(string: "https://example.com/a"))
        let response = try #require(HTTPURLResponse(url: url, statusCode: 404, httpVersion: nil, headerFields: nil))
        let cases: [(CourierError, String, Int)] = [
            (.timedOut(url: url, reason: "idle timeout"), NSURLErrorDomain, -1001),
            (.cannotConnect(url: url, reason: "refused"), NSURLErrorDomain, -1004),
            (.connectionLost(url: url, reason: "reset"), NSURLErrorDomain, -1005),
            (.cancelled(url: url), NSURLErrorDomain, -999),
            (.tooManyRedirects(url: url, limit: 5), NSURLErrorDomain, -1007),
            (.unacceptableStatusCode(response: response, data: nil, underlying: nil), CourierError.responseSerializationErrorDomain, -1011),
            (.unacceptableContentType("text/html", response: response, data: nil), CourierError.responseSerializationErrorDomain, -1016),
            (.responseSerializationFailed(reason: "bad JSON", response: response, data: nil, underlying: nil), CourierError.courierErrorDomain, 2),
        ]
        for (error, domain, code) in cases {
            let bridged = error as NSError
            #expect(bridged.domain == NSURLErrorDomain, "\(error)")
            #expect(bridged.code == code, "\(error)")
            #expect(error.nsError.domain == domain, "\(error)")
            #expect(error.nsError.code == code, "\(error)")
            #expect(bridged.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url, "\(error)")
            #expect(bridged.localizedDescription == error.description, "\(error)")
        }
    }
}
