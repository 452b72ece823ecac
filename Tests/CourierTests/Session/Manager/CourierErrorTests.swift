import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct CourierErrorTests {
    @Test func engineErrorMapping() {
        let url = URL(string: "http://h/")
        guard case .timedOut(url, _) = CourierError(.timedOut(.idle), url: url) else {
            Issue.record("timeout")
            return
        }
        guard case .cannotConnect = CourierError(.cannotConnect(host: "h", port: 1, reason: "refused")) else {
            Issue.record("connect")
            return
        }
        guard case .cannotConnect = CourierError(.dnsFailure(host: "h", reason: "nx")) else {
            Issue.record("dns")
            return
        }
        guard case .connectionLost = CourierError(.connectionLost("reset")) else {
            Issue.record("lost")
            return
        }
        guard case .cancelled(url) = CourierError(.cancelled, url: url) else {
            Issue.record("cancelled")
            return
        }
        guard case .serverTrustRejected(host: "h", reason: "pin", url: nil, chain: []) = CourierError(.serverTrustRejected(host: "h", reason: "pin")) else {
            Issue.record("trust")
            return
        }
        guard case .engine(.shutDown) = CourierError(.shutDown) else {
            Issue.record("engine")
            return
        }
        #expect(CourierError(.cancelled, url: url).failingURL == url)
    }

    /// One mapping for the session and for callers: a TLS handshake failure is not a failure to
    /// connect, and reasons are the engine's own (the session's tasks report the same values).
    @Test func engineErrorMappingMatchesTheSession() {
        let url = URL(string: "https://h/")
        guard case .engine(.tlsHandshakeFailed("wrong version number")) = CourierError(.tlsHandshakeFailed("wrong version number")) else {
            Issue.record("a TLS handshake failure became \(CourierError(.tlsHandshakeFailed("wrong version number")))")
            return
        }
        guard case .cannotConnect(url, "connection refused") = CourierError(.cannotConnect(host: "h", port: 1, reason: "connection refused"), url: url) else {
            Issue.record("cannot connect")
            return
        }
        guard case .timedOut(url, "idle timeout") = CourierError(.timedOut(.idle), url: url) else {
            Issue.record("timeout")
            return
        }
    }

    @Test func messages() {
        #expect(CourierError.requestSerializationFailed(.fileNotFound(path: "/x/y")).description.contains("/x/y"))
        #expect(CourierError.tooManyRedirects(url: nil, limit: 16).description == "Too many HTTP redirects (more than 16)")
    }

    @Test func certificateMessagesNameTheProblemAndThePath() {
        #expect(CourierError.invalidCertificate(reason: "no bytes").description == "Invalid certificate: no bytes")
        let unreadable = CourierError.certificateFileUnreadable(path: "/pins/a.cer", reason: "permission denied")
        #expect(unreadable.description == "Could not read the certificate file /pins/a.cer: permission denied")
        let invalid = CourierError.invalidCertificateFile(path: "/pins/b.pem", reason: "malformed PEM text")
        #expect(invalid.description == "The file /pins/b.pem does not hold a valid certificate: malformed PEM text")
        #expect(invalid.errorDescription == invalid.description)
    }
}
