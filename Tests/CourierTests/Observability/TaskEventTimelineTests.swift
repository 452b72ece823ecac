@testable import Courier
import CourierEngine
import Foundation
import Testing

/// The pure timeline: metrics snapshots in, each phase's start and end out, once, in the
/// exchange's order.
@Suite("Task event timeline")
struct TaskEventTimelineTests {
    private static let t0 = Date(timeIntervalSince1970: 1_000_000)
    private static func at(_ milliseconds: Double) -> Date { t0.addingTimeInterval(milliseconds / 1000) }

    private static func names(_ entries: [TaskEventTimeline.Entry]) -> [String] { entries.map(\.kind.name) }

    /// A new TLS connection: lookup 1–3 ms, connect 3–10 (TLS 5–10), request at 11.
    private static func newConnection() -> EngineMetrics {
        var metrics = EngineMetrics(fetchStart: t0)
        metrics.domainLookupStart = at(1)
        metrics.domainLookupEnd = at(3)
        metrics.connectStart = at(3)
        metrics.secureConnectionStart = at(5)
        metrics.secureConnectionEnd = at(10)
        metrics.connectEnd = at(10)
        metrics.requestStart = at(11)
        metrics.remoteAddress = "127.0.0.1"
        metrics.networkProtocolName = "h2"
        return metrics
    }

    @Test func aNewConnectionsSetupComesBeforeTheRequestInNestingOrder() {
        var timeline = TaskEventTimeline(hasBody: true)
        var metrics = Self.newConnection()
        let first = timeline.advance(to: metrics)
        #expect(
            Self.names(first) == [
                "connectionWaitStart", "domainLookupStart", "domainLookupEnd", "connectStart", "secureConnectStart",
                "secureConnectEnd", "connectEnd", "connectionWaitEnd", "connectionAcquired", "requestHeadersStart",
                "requestHeadersEnd", "requestBodyStart",
            ])
        #expect(first.map(\.date) == [Self.t0, Self.at(1), Self.at(3), Self.at(3), Self.at(5), Self.at(10), Self.at(10), Self.at(11), Self.at(11), Self.at(11), Self.at(11), Self.at(11)])
        if case .connectionAcquired(let connection) = first[8].kind {
            #expect(!connection.isReused)
            #expect(connection.networkProtocol == "h2")
            #expect(connection.remoteAddress == "127.0.0.1")
        } else {
            Issue.record("expected connectionAcquired, got \(first[8].kind.name)")
        }

        metrics.requestEnd = Self.at(12)
        #expect(Self.names(timeline.advance(to: metrics)) == ["requestBodyEnd"], "only what is new")
        metrics.responseStart = Self.at(20)
        #expect(Self.names(timeline.advance(to: metrics)) == ["responseHeadersStart"])
        #expect(Self.names(timeline.responseHeadReceived(at: Self.at(21))) == ["responseHeadersEnd"])
        #expect(Self.names(timeline.responseBodyReceived(at: Self.at(22))) == ["responseBodyStart"])
        #expect(timeline.responseBodyReceived(at: Self.at(23)).isEmpty, "once")
        metrics.responseEnd = Self.at(30)
        let end = timeline.ended(with: metrics, error: nil, at: Self.at(31))
        #expect(Self.names(end) == ["responseBodyEnd", "connectionReleased"])
        #expect(end.map(\.date) == [Self.at(30), Self.at(30)])
    }

    @Test func happyEyeballsAttemptsAreReportedInsideTheConnectInTheOrderTheyHappened() {
        var timeline = TaskEventTimeline(hasBody: false)
        var metrics = Self.newConnection()
        metrics.connectAttempts = [
            EngineMetrics.ConnectAttempt(address: "::1", port: 8080, start: Self.at(3), end: Self.at(4), error: "Connection refused"),
            EngineMetrics.ConnectAttempt(address: "127.0.0.1", port: 8080, start: Self.at(3.5), end: Self.at(4.5), error: nil),
        ]
        let names = Self.names(timeline.advance(to: metrics))
        let connect = Array(names[3...8])
        #expect(
            connect == [
                "connectStart", "connectAttemptStart", "connectAttemptStart", "connectAttemptFailed", "connectAttemptEnd",
                "secureConnectStart",
            ], "\(names)")
    }

    @Test func aReusedConnectionHasNoSetupAndABodilessRequestNoBodyPhase() {
        var timeline = TaskEventTimeline(hasBody: false)
        var metrics = Self.newConnection()
        metrics.isReusedConnection = true
        metrics.responseStart = Self.at(15)
        metrics.responseEnd = Self.at(16)
        let all = timeline.ended(with: metrics, error: nil, at: Self.at(17))
        #expect(
            Self.names(all) == [
                "connectionWaitStart", "connectionWaitEnd", "connectionAcquired", "requestHeadersStart", "requestHeadersEnd",
                "responseHeadersStart", "responseHeadersEnd", "responseBodyStart", "responseBodyEnd", "connectionReleased",
            ])
    }

    @Test func aFailedConnectFailsTheConnectAndTheWaitAndReleasesNothing() {
        var timeline = TaskEventTimeline(hasBody: false)
        let metrics = EngineMetrics(fetchStart: Self.t0)
        let error = EngineError.cannotConnect(host: "127.0.0.1", port: 1, reason: "Connection refused")
        let all = timeline.ended(with: metrics, error: error, at: Self.at(5))
        #expect(Self.names(all) == ["connectionWaitStart", "connectStart", "connectFailed", "connectionWaitFailed"])
        #expect(all.last?.date == Self.at(5))
    }

    @Test func aNameLookupFailureIsTheLookupsFailure() {
        var timeline = TaskEventTimeline(hasBody: false)
        let all = timeline.ended(
            with: EngineMetrics(fetchStart: Self.t0), error: CourierError.engine(.dnsFailure(host: "nowhere.invalid", reason: "unknown")),
            at: Self.at(2))
        #expect(Self.names(all) == ["connectionWaitStart", "domainLookupStart", "domainLookupFailed", "connectionWaitFailed"])
    }

    @Test func aFailureWhileWaitingForTheAnswerFailsTheOpenPhasesInnermostFirst() {
        var timeline = TaskEventTimeline(hasBody: true)
        var metrics = Self.newConnection()
        metrics.isReusedConnection = true
        _ = timeline.advance(to: metrics)
        metrics.requestEnd = Self.at(12)
        let all = timeline.ended(with: metrics, error: EngineError.timedOut(.idle), at: Self.at(40))
        #expect(Self.names(all) == ["requestBodyEnd", "connectionReleased"], "the request was sent; nothing else was open")
    }

    @Test func aReplayOnANewConnectionIsADecisionBeforeTheNewConnection() {
        var timeline = TaskEventTimeline(hasBody: false)
        var metrics = Self.newConnection()
        var stale = EngineMetrics(fetchStart: Self.t0)
        stale.isReusedConnection = true
        stale.requestStart = Self.at(0.5)
        metrics.replayedAttempts = [stale]
        let names = Self.names(timeline.advance(to: metrics))
        #expect(Array(names.prefix(3)) == ["connectionWaitStart", "replayedOnNewConnection", "domainLookupStart"])
    }
}
