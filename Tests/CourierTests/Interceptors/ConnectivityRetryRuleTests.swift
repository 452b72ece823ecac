@testable import Courier
import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `ConnectivityRetryRule` with plain values: which failures wait for the network, what a
/// reachability status means, and what the wait's end decides.
@Suite("ConnectivityRetryRule")
struct ConnectivityRetryRuleTests {
    let rule = ConnectivityRetrier().rule
    let refused = CourierError(.cannotConnect(host: "example.com", port: 80, reason: "Network is unreachable"))

    @Test("failures that a missing route causes are connectivity failures", arguments: [
        CourierError(.cannotConnect(host: "h", port: 80, reason: "Network is unreachable")),
        CourierError(.cannotConnect(host: "h", port: 80, reason: "No route to host")),
        CourierError(.cannotConnect(host: "h", port: 80, reason: "Connection refused")),
        CourierError(.dnsFailure(host: "h", reason: "Temporary failure in name resolution")),
        CourierError(.timedOut(.connect)),
        CourierError.engine(.dnsFailure(host: "h", reason: "nx")),
        CourierError.engine(.cannotConnect(host: "h", port: 1, reason: "unreachable")),
        CourierError.engine(.timedOut(.connect)),
    ])
    func connectivityFailures(error: CourierError) {
        #expect(ConnectivityRetryRule.isConnectivityFailure(error))
    }

    @Test("other failures are not", arguments: [
        CourierError(.timedOut(.idle)),
        CourierError(.timedOut(.deadline)),
        CourierError(.connectionLost("connection reset by peer")),
        CourierError(.tlsHandshakeFailed("bad record")),
        CourierError(.serverTrustRejected(host: "h", reason: "expired")),
        CourierError(.protocolViolation("bad chunk")),
        CourierError(.cancelled),
        CourierError.tooManyRedirects(url: nil, limit: 3),
    ])
    func otherFailures(error: CourierError) {
        #expect(!ConnectivityRetryRule.isConnectivityFailure(error))
    }

    @Test("engine errors and URLErrors are classified too")
    func engineAndURLErrors() {
        #expect(ConnectivityRetryRule.isConnectivityFailure(EngineError.dnsFailure(host: "h", reason: "nx")))
        #expect(ConnectivityRetryRule.isConnectivityFailure(EngineError.cannotConnect(host: "h", port: 1, reason: "unreachable")))
        #expect(!ConnectivityRetryRule.isConnectivityFailure(EngineError.timedOut(.idle)))
        #expect(ConnectivityRetryRule.isConnectivityFailure(URLError(.notConnectedToInternet)))
        #expect(ConnectivityRetryRule.isConnectivityFailure(URLError(.cannotFindHost)))
        #expect(!ConnectivityRetryRule.isConnectivityFailure(URLError(.badServerResponse)))
        struct Other: Error {}
        #expect(!ConnectivityRetryRule.isConnectivityFailure(Other()))
    }

    @Test("an idempotent request that could not connect checks reachability")
    func idempotentConnectFailure() {
        for method in ["GET", "get", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE", nil] {
            #expect(rule.decide(method: method, retryCount: 0, error: refused, hasResponse: false) == .checkReachability, "\(method ?? "nil")")
        }
    }

    @Test("a response, even a server error, is never waited on")
    func responseReceived() throws {
        let url = try #require(URL(string: "http://example.com/"))
        let response = try #require(HTTPURLResponse(url: url, statusCode: 503, httpVersion: "HTTP/1.1", headerFields: nil))
        let serverError = CourierError.unacceptableStatusCode(response: response, data: nil, underlying: nil)
        #expect(rule.decide(method: "GET", retryCount: 0, error: serverError, hasResponse: true) == .doNotRetry(.responseReceived))
        // A connect failure reported with a response (a proxy's answer) is still an answer.
        #expect(rule.decide(method: "GET", retryCount: 0, error: refused, hasResponse: true) == .doNotRetry(.responseReceived))
    }

    @Test("POST and PATCH are not retried by default; a configured set is honoured without case")
    func methods() {
        #expect(rule.decide(method: "POST", retryCount: 0, error: refused, hasResponse: false) == .doNotRetry(.methodNotRetryable))
        #expect(rule.decide(method: "PATCH", retryCount: 0, error: refused, hasResponse: false) == .doNotRetry(.methodNotRetryable))
        let posts = ConnectivityRetrier(retryableMethods: ["post"]).rule
        #expect(posts.decide(method: "POST", retryCount: 0, error: refused, hasResponse: false) == .checkReachability)
        #expect(posts.decide(method: "GET", retryCount: 0, error: refused, hasResponse: false) == .doNotRetry(.methodNotRetryable))
    }

    @Test("the retries are bounded by maximumRetries")
    func bounded() {
        #expect(rule.maximumRetries == 1)
        #expect(rule.decide(method: "GET", retryCount: 1, error: refused, hasResponse: false) == .doNotRetry(.retriesExhausted))
        let three = ConnectivityRetrier(maximumRetries: 3).rule
        #expect(three.decide(method: "GET", retryCount: 2, error: refused, hasResponse: false) == .checkReachability)
        #expect(three.decide(method: "GET", retryCount: 3, error: refused, hasResponse: false) == .doNotRetry(.retriesExhausted))
        let none = ConnectivityRetrier(maximumRetries: 0).rule
        #expect(none.decide(method: "GET", retryCount: 0, error: refused, hasResponse: false) == .doNotRetry(.retriesExhausted))
    }

    @Test("a failure that is not the network's is not waited on")
    func notConnectivity() {
        let lost = CourierError(.connectionLost("reset"))
        #expect(rule.decide(method: "GET", retryCount: 0, error: lost, hasResponse: false) == .doNotRetry(.notAConnectivityFailure))
    }

    @Test("reachable: don't wait; not reachable: wait; unknown: keep listening")
    func verdicts() {
        #expect(ConnectivityRetryRule.verdict(for: .reachableViaWiFi) == .reachable)
        #expect(ConnectivityRetryRule.verdict(for: .reachableViaWWAN) == .reachable)
        #expect(ConnectivityRetryRule.verdict(for: .notReachable) == .waitForRoute)
        #expect(ConnectivityRetryRule.verdict(for: .unknown) == .undetermined)
    }

    @Test("only a network that came back is retried")
    func outcomes() {
        func retries(_ outcome: ConnectivityRetryRule.WaitOutcome) -> Bool {
            if case .retry = ConnectivityRetryRule.decision(after: outcome) { return true }
            return false
        }
        #expect(retries(.becameReachable))
        #expect(!retries(.alreadyReachable))
        #expect(!retries(.timedOut))
        #expect(!retries(.cancelled))
        #expect(!retries(.noReachability))
    }

    @Test("the maximum wait is clamped to 0 or more, and methods are upper-cased")
    func settings() {
        #expect(ConnectivityRetrier(maximumWait: -1).maximumWait == 0)
        #expect(ConnectivityRetrier(maximumWait: .infinity).maximumWait == 0)
        #expect(ConnectivityRetrier().maximumWait == 30)
        #expect(ConnectivityRetrier(retryableMethods: ["get", "Put"]).retryableMethods == ["GET", "PUT"])
        #expect(ConnectivityRetrier().retryableMethods == ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"])
    }

    @Test("a reachability manager is made for an address or a host name, none for no host")
    func managers() {
        #expect(ConnectivityWait.manager(forHost: "10.0.0.1")?.target == ReachabilityAddress(literal: "10.0.0.1").map { .address($0) })
        #expect(ConnectivityWait.manager(forHost: "[::1]")?.target == ReachabilityAddress(literal: "::1").map { .address($0) })
        #expect(ConnectivityWait.manager(forHost: "example.com")?.target == .domain("example.com"))
        #expect(ConnectivityWait.manager(forHost: nil) == nil)
        #expect(ConnectivityWait.manager(forHost: "") == nil)
    }
}
