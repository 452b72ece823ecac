@testable import Courier
import CourierEngine
import Foundation
import NIOCore
import Testing

/// Where a task's deadline ended it, read from the last hop's metrics (plain values), and the
/// one deadline a task keeps across its hops.
@Suite("Deadline expiry and the task deadline")
struct DeadlineExpiryTests {
    @Test func thePhaseComesFromHowFarTheHopGot() {
        var metrics = EngineMetrics()
        #expect(DeadlineExpiry(metrics: metrics, redirects: 0, retries: 0).phase == .waitingForConnection)
        metrics.connectionSetupPhase = .connecting
        #expect(DeadlineExpiry(metrics: metrics, redirects: 0, retries: 0).phase == .connectionSetup(.connecting))
        metrics.connectionSetupPhase = .proxyHandshake
        #expect(DeadlineExpiry(metrics: metrics, redirects: 0, retries: 0).phase == .connectionSetup(.proxyHandshake))
        metrics.connectionSetupPhase = .established
        #expect(DeadlineExpiry(metrics: metrics, redirects: 0, retries: 0).phase == .waitingForConnection)
        metrics.connectionSetupPhase = nil
        metrics.requestStart = Date()
        #expect(DeadlineExpiry(metrics: metrics, redirects: 0, retries: 0).phase == .waitingForResponse)
        metrics.responseStart = Date()
        #expect(DeadlineExpiry(metrics: metrics, redirects: 0, retries: 0).phase == .receivingResponse)
        #expect(DeadlineExpiry(metrics: nil, redirects: 0, retries: 0).phase == .waitingForConnection)
    }

    @Test(arguments: [
        (DeadlineExpiry(phase: .connectionSetup(.tlsHandshake)), "deadline timeout during the TLS handshake"),
        (DeadlineExpiry(phase: .connectionSetup(.proxyHandshake)), "deadline timeout during the proxy handshake"),
        (DeadlineExpiry(phase: .connectionSetup(.connecting)), "deadline timeout during the TCP connect"),
        (DeadlineExpiry(phase: .waitingForResponse, redirects: 3), "deadline timeout while waiting for the response (on redirect 3)"),
        (DeadlineExpiry(phase: .receivingResponse, redirects: 1, retries: 2),
            "deadline timeout while receiving the response (on redirect 1, retry 2)"),
        (DeadlineExpiry(phase: .waitingForConnection), "deadline timeout while waiting for a connection"),
    ])
    func theReasonNamesTheDeadlineThePhaseAndTheHop(_ expiry: DeadlineExpiry, _ reason: String) {
        #expect(expiry.reason == reason)
        guard case .timedOut(_, let reported) = expiry.error(url: nil) else {
            Issue.record("not a timeout")
            return
        }
        #expect(reported == reason)
    }

    @Test func theTaskDeadlineIsOneInstantAndRetriesWaitNoLongerThanItAllows() throws {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let deadline = try #require(TaskDeadline(timeout: 3, start: start))
        #expect(deadline.instant == start + .seconds(3))
        #expect(deadline.remaining(at: start + .seconds(1)) == .seconds(2))
        #expect(deadline.remaining(at: start + .seconds(5)) == .zero)
        #expect(deadline.boundedDelay(60, at: start + .seconds(1)) == 2)
        #expect(deadline.boundedDelay(0.5, at: start + .seconds(1)) == 0.5)
        #expect(deadline.boundedDelay(10, at: start + .seconds(4)) == 0)
        #expect(TaskDeadline(timeout: .nan, start: start) == nil)
    }
}
