@testable import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// ``RetryRule`` with plain values: backoff, Retry-After parsing, retryable failures, decisions.
@Suite("Retry rule")
struct RetryRuleTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static func statusError(_ code: Int) -> CourierError {
        let response = HTTPURLResponse(url: URL(string: "http://x/")!, statusCode: code, httpVersion: "HTTP/1.1", headerFields: [:])!
        return .unacceptableStatusCode(response: response, data: nil, underlying: nil)
    }

    @Test func backoffIsScaleTimesBaseToTheRetryCountPlusJitter() {
        #expect(RetryRule.backoff(retryCount: 0, base: 2, scale: 0.5, jitter: 0) == 0.5)
        #expect(RetryRule.backoff(retryCount: 1, base: 2, scale: 0.5, jitter: 0) == 1)
        #expect(RetryRule.backoff(retryCount: 3, base: 2, scale: 0.5, jitter: 0) == 4)
        #expect(RetryRule.backoff(retryCount: 3, base: 2, scale: 0.5, jitter: 1) == 5)  // + 25 %
        #expect(RetryRule.backoff(retryCount: 2, base: 3, scale: 1, jitter: 0.5) == 9 * 1.125)
    }

    @Test func backoffIsBoundedAndNeverNegative() {
        #expect(RetryRule.backoff(retryCount: 10_000, base: 2, scale: 1, jitter: 0) == RetryRule.maximumBackoff)
        #expect(RetryRule.backoff(retryCount: 1, base: -2, scale: 1, jitter: 0) == 0)
        #expect(RetryRule.backoff(retryCount: 1, base: .nan, scale: 1, jitter: 0) == 0)
        #expect(RetryRule.backoff(retryCount: -5, base: 2, scale: 1, jitter: 7) == 1.25)  // clamped count and jitter
    }

    @Test func retryAfterSecondsAndDates() {
        #expect(RetryRule.retryAfter("120", now: Self.now) == 120)
        #expect(RetryRule.retryAfter(" 0 ", now: Self.now) == 0)
        #expect(RetryRule.retryAfter("99999999999999999999999", now: Self.now) == .greatestFiniteMagnitude)
        #expect(RetryRule.retryAfter(CacheEndpoints.httpDate(Self.now.addingTimeInterval(30)), now: Self.now) == 30)
        #expect(RetryRule.retryAfter(CacheEndpoints.httpDate(Self.now.addingTimeInterval(-30)), now: Self.now) == 0)
        #expect(RetryRule.retryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.now) == 0)  // RFC 850, past
        #expect(RetryRule.retryAfter("-5", now: Self.now) == nil)
        #expect(RetryRule.retryAfter("1.5", now: Self.now) == nil)
        #expect(RetryRule.retryAfter("soon", now: Self.now) == nil)
        #expect(RetryRule.retryAfter("", now: Self.now) == nil)
        #expect(RetryRule.retryAfter(nil, now: Self.now) == nil)
    }

    @Test func retryableFailuresAreThoseBeforeAnyResponse() {
        #expect(RetryRule.isRetryableFailure(CourierError(EngineError.connectionLost("reset")), hadResponse: false))
        #expect(!RetryRule.isRetryableFailure(CourierError(EngineError.connectionLost("reset")), hadResponse: true))
        #expect(RetryRule.isRetryableFailure(CourierError(EngineError.timedOut(.connect)), hadResponse: false))
        #expect(!RetryRule.isRetryableFailure(CourierError(EngineError.timedOut(.idle)), hadResponse: false))
        #expect(!RetryRule.isRetryableFailure(CourierError(EngineError.timedOut(.deadline)), hadResponse: false))
        #expect(!RetryRule.isRetryableFailure(CourierError.cancelled(url: nil), hadResponse: false))
        #expect(!RetryRule.isRetryableFailure(CourierError(EngineError.protocolViolation("x")), hadResponse: false))
        #expect(!RetryRule.isRetryableFailure(URLError(.badURL), hadResponse: false))
    }

    func decide(
        _ method: String? = "GET", retryCount: Int = 0, error: any Error = RetryRuleTests.statusError(503), status: Int? = 503,
        retryAfter: String? = nil, policy: RetryPolicy = RetryPolicy()
    ) -> TimeInterval? {
        RetryRule.decide(
            method: method, retryCount: retryCount, error: error, statusCode: status, retryAfter: retryAfter, now: Self.now, jitter: 0,
            policy: policy
        ).retryDelay
    }

    @Test func decisions() {
        #expect(decide() == 0.5)
        #expect(decide(nil) == 0.5)  // nil is GET
        #expect(decide("get", retryCount: 1) == 1)
        #expect(decide(retryCount: 2) == nil)  // limit 2
        #expect(decide("POST") == nil)
        #expect(decide("PATCH") == nil)
        #expect(decide("PUT") == 0.5)
        #expect(decide(error: Self.statusError(404), status: 404) == nil)
        for code in [408, 429, 500, 502, 503, 504] { #expect(decide(error: Self.statusError(code), status: code) != nil) }
        // A retryable status whose body was then cut short is not retried.
        #expect(decide(error: CourierError(EngineError.connectionLost("x")), status: 503) == nil)
        #expect(decide(error: CourierError(EngineError.connectionLost("x")), status: nil) == 0.5)
        #expect(decide(error: CourierError(EngineError.timedOut(.idle)), status: nil) == nil)
        #expect(decide(retryAfter: "7") == 7)
        #expect(decide(retryAfter: "7000") == 60)  // capped
        #expect(decide(retryAfter: "7", policy: RetryPolicy(maximumRetryAfter: 2)) == 2)
        #expect(decide(retryAfter: "garbage") == 0.5)  // falls back to the backoff
        // Hostile values: never a crash, a negative or an unbounded wait.
        #expect(decide(retryAfter: "1e30") == 0.5)
        #expect(decide(retryAfter: "-5") == 0.5)
        #expect(decide(retryAfter: "+5") == 0.5)
        #expect(decide(retryAfter: "5, 10") == 0.5)  // two fields, joined: neither is trusted
        #expect(decide(retryAfter: "Fri, 31 Dec 9999 23:59:59 GMT") == 60)  // far future: capped
        #expect(decide(retryAfter: "Mon, 01 Jan 1900 00:00:00 GMT") == 0)  // long past: now
        #expect(decide(retryAfter: "99999999999999999999999", policy: RetryPolicy(maximumRetryAfter: .nan)) == 0)
        #expect(decide(retryAfter: "7", policy: RetryPolicy(maximumRetryAfter: -1)) == 0)
        #expect(decide("delete", policy: RetryPolicy(retryableMethods: ["DELETE"])) == 0.5)
        #expect(decide(policy: RetryPolicy(retryLimit: 0)) == nil)
    }

    @Test func stateMachineRetryStep() {
        var machine = TaskStateMachine(destination: .memory, maximumRedirects: 5, maximumBodySize: nil)
        _ = machine.resume(hasRequest: true)
        _ = machine.exchangeStarted()
        _ = machine.receivedFinalHead(expectedLength: 3)
        _ = machine.receivedBodyChunk(count: 3)
        #expect(machine.received == 3)
        _ = machine.exchangeEnded(error: .connectionLost("x"))
        let decided = machine.retryDecided()
        #expect(decided)
        #expect(machine.received == 0)
        #expect(machine.state == .running)
        // Cancelled while the retry waited: nothing is sent (the cancellation completes the task).
        let cancel = machine.cancel()
        #expect(cancel == .completeCancelled)
        let afterCancel = machine.retryDecided()
        #expect(!afterCancel)
        // A failure of the session's own is never retried.
        var failed = TaskStateMachine(destination: .memory, maximumRedirects: 5, maximumBodySize: nil)
        _ = failed.resume(hasRequest: true)
        _ = failed.exchangeStarted()
        _ = failed.fail(.responseBodyTooLarge(url: nil, limit: 1, contentLength: nil, received: 2))
        _ = failed.exchangeEnded(error: .cancelled)
        let afterFailure = failed.retryDecided()
        #expect(!afterFailure)
    }

    @Test func stateMachineRetryStepForADownload() {
        // A retried download opens a new file for the next attempt's head (the failed
        // attempt's file is dropped by the session), and writes to it from 0.
        var machine = TaskStateMachine(destination: .file, maximumRedirects: 5, maximumBodySize: nil)
        _ = machine.resume(hasRequest: true)
        _ = machine.exchangeStarted()
        #expect(machine.receivedFinalHead(expectedLength: 17) == .openDownloadFile)
        machine.downloadFileOpened(resumedAt: nil)
        #expect(machine.receivedBodyChunk(count: 17) == .write(received: 17))
        _ = machine.exchangeEnded(error: nil)
        let decided = machine.retryDecided()
        #expect(decided)
        #expect(machine.downloadFile == .notOpened)
        _ = machine.exchangeStarted()
        #expect(machine.receivedFinalHead(expectedLength: 5) == .openDownloadFile)
        machine.downloadFileOpened(resumedAt: nil)
        #expect(machine.receivedBodyChunk(count: 5) == .write(received: 5))
    }

    @Test func bearerTokenIsReadFromTheRequest() {
        var request = URLRequest(url: URL(string: "http://x/")!)
        #expect(AuthenticationInterceptor.bearerToken(in: request) == nil)
        request.setValue("Bearer abc", forHTTPHeaderField: "Authorization")
        #expect(AuthenticationInterceptor.bearerToken(in: request) == "abc")
        request.setValue("Basic abc", forHTTPHeaderField: "Authorization")
        #expect(AuthenticationInterceptor.bearerToken(in: request) == nil)
    }

    @Test func chainTakesTheFirstDecisionOtherThanDoNotRetry() async throws {
        struct Fixed: RequestInterceptor {
            let decision: RetryDecision
            func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision { decision }
        }
        let task = URLSessionManager().dataTask(with: URLRequest(url: URL(string: "http://127.0.0.1:9/")!))
        let chain = Interceptor([Fixed(decision: .doNotRetry), Fixed(decision: .retryWithDelay(3)), Fixed(decision: .retry)])
        #expect(await chain.retry(task, dueTo: URLError(.badURL), response: nil).retryDelay == 3)
        #expect(await Interceptor([]).retry(task, dueTo: URLError(.badURL), response: nil).retryDelay == nil)
    }
}
