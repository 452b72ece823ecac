@testable import Courier
import Foundation
import Testing

/// The reconnection rules of `EventSource` and the parser's reconnection fields, with plain values.
@Suite("event source reconnection rules")
struct EventSourceReconnectionTests {
    private func rules(_ configure: (inout EventSourceConfiguration) -> Void = { _ in }) -> EventSourceReconnection {
        var configuration = EventSourceConfiguration(initialReconnectionTime: .seconds(1), maximumReconnectionDelay: .seconds(10))
        configure(&configuration)
        return EventSourceReconnection(configuration: configuration)
    }

    private func header(_ rules: EventSourceReconnection, _ name: String) -> String? {
        rules.requestFields.first { $0.name == name }?.value
    }

    @Test("each request asks for an event stream, uncached, with the last event ID once there is one")
    func requestFields() {
        var rules = rules()
        #expect(header(rules, "Accept") == "text/event-stream")
        #expect(header(rules, "Cache-Control") == "no-cache")
        #expect(header(rules, "Last-Event-ID") == nil)
        rules.eventDispatched(lastEventID: "41", delivered: true)
        #expect(header(rules, "Last-Event-ID") == "41")
        rules.eventDispatched(lastEventID: nil, delivered: true)
        #expect(header(rules, "Last-Event-ID") == "41")
        rules.eventDispatched(lastEventID: "", delivered: false)
        #expect(header(rules, "Last-Event-ID") == nil)
    }

    @Test("the parser commits an id at each dispatch, ignores one with NUL, resets on an empty one, and carries one over")
    func parserLastEventID() throws {
        var parser = ServerSentEventParser(lastEventID: "7")
        #expect(try parser.consume("data: a") == nil)
        #expect(try parser.consume("") == ServerSentEvent(data: "a", id: "7"))
        _ = try parser.consume("id: 8")
        #expect(parser.dispatchedLastEventID == "7")  // not committed before its blank line
        _ = try parser.consume("")                    // no data: nothing given, the id still counts
        #expect(parser.dispatchedLastEventID == "8")
        _ = try parser.consume("id: 9\u{0}")
        _ = try parser.consume("")
        #expect(parser.dispatchedLastEventID == "8")
        _ = try parser.consume("id")
        _ = try parser.consume("")
        #expect(parser.dispatchedLastEventID == "")
    }

    @Test("retry: sets the reconnection time as soon as it is read; one that is not digits is ignored")
    func parserRetry() throws {
        var parser = ServerSentEventParser()
        _ = try parser.consume("retry: 2500")
        #expect(parser.reconnectionTime == 2500)
        _ = try parser.consume("retry: 1e3")
        #expect(parser.reconnectionTime == 2500)
        var rules = rules()
        rules.retryField(milliseconds: 2500)
        rules.attemptStarting()
        #expect(rules.responseArrived(status: 200, mimeType: "text/event-stream", retryAfter: nil, jitter: 0) == .stream)
        rules.eventDispatched(lastEventID: "1", delivered: true)
        #expect(rules.streamEnded(nil, jitter: 0.9) == .reconnect(after: .milliseconds(2500)))

        // A hostile server's retry: is held to an hour (the parser takes any Int it reads).
        _ = try parser.consume("retry: 9223372036854775807")
        #expect(parser.reconnectionTime == Int.max)
        rules.retryField(milliseconds: Int.max)
        rules.attemptStarting()
        #expect(rules.responseArrived(status: 200, mimeType: "text/event-stream", retryAfter: nil, jitter: 0) == .stream)
        rules.eventDispatched(lastEventID: "2", delivered: true)
        #expect(rules.streamEnded(nil, jitter: 0) == .reconnect(after: .seconds(3600)))
    }

    @Test("a normal end or a drop after events reconnects after the reconnection time; a stream with no event backs off")
    func streamEnds() {
        var rules = rules()
        rules.attemptStarting()
        _ = rules.responseArrived(status: 200, mimeType: "TEXT/EVENT-STREAM", retryAfter: nil, jitter: 0)
        rules.eventDispatched(lastEventID: "1", delivered: true)
        #expect(rules.streamEnded(.transient, jitter: 0) == .reconnect(after: .seconds(1)))
        rules.attemptStarting()
        _ = rules.responseArrived(status: 200, mimeType: "text/event-stream", retryAfter: nil, jitter: 0)
        #expect(rules.streamEnded(nil, jitter: 0) == .reconnect(after: .seconds(1)))
        #expect(rules.consecutiveFailures == 1)
        rules.attemptStarting()
        _ = rules.responseArrived(status: 200, mimeType: "text/event-stream", retryAfter: nil, jitter: 0)
        #expect(rules.streamEnded(nil, jitter: 0) == .reconnect(after: .seconds(1)))  // counts from the accepted head
        #expect(rules.reconnections == 2)
        #expect(rules.streamEnded(.fatal, jitter: 0) == .fail)
        #expect(rules.streamEnded(.cancelled, jitter: 0) == .fail)
    }

    @Test("5xx, 408, 429 and connection errors back off exponentially up to the cap, with jitter; an accepted stream resets")
    func backoff() {
        var rules = rules()
        #expect(rules.responseArrived(status: 503, mimeType: "text/html", retryAfter: nil, jitter: 0) == .reconnect(after: .seconds(1)))
        #expect(rules.responseArrived(status: 500, mimeType: nil, retryAfter: nil, jitter: 0) == .reconnect(after: .seconds(2)))
        #expect(rules.connectFailed(.transient, reachability: nil, jitter: 0) == .reconnect(after: .seconds(4)))
        #expect(rules.responseArrived(status: 408, mimeType: nil, retryAfter: nil, jitter: 0) == .reconnect(after: .seconds(8)))
        #expect(rules.responseArrived(status: 429, mimeType: nil, retryAfter: nil, jitter: 0) == .reconnect(after: .seconds(10)))
        #expect(rules.responseArrived(status: 502, mimeType: nil, retryAfter: nil, jitter: 1) == .reconnect(after: .milliseconds(7500)))
        #expect(rules.consecutiveFailures == 6)
        #expect(rules.responseArrived(status: 200, mimeType: "text/event-stream", retryAfter: nil, jitter: 0) == .stream)
        #expect(rules.consecutiveFailures == 0)
        #expect(rules.connectFailed(.unreachable, reachability: nil, jitter: 0) == .reconnect(after: .seconds(1)))
    }

    @Test("Retry-After asks for at least its delay, past the cap, up to an hour")
    func retryAfter() {
        var rules = rules()
        #expect(rules.responseArrived(status: 429, mimeType: nil, retryAfter: .seconds(30), jitter: 0) == .reconnect(after: .seconds(30)))
        #expect(rules.responseArrived(status: 503, mimeType: nil, retryAfter: .zero, jitter: 0) == .reconnect(after: .seconds(2)))
        #expect(rules.responseArrived(status: 503, mimeType: nil, retryAfter: .seconds(86_400), jitter: 0) == .reconnect(after: .seconds(3600)))
    }

    @Test("retry: 0 still backs off from 100 ms while the server fails")
    func backoffFloor() {
        var rules = rules()
        rules.retryField(milliseconds: 0)
        #expect(rules.responseArrived(status: 503, mimeType: nil, retryAfter: nil, jitter: 0) == .reconnect(after: .milliseconds(100)))
        #expect(rules.responseArrived(status: 503, mimeType: nil, retryAfter: nil, jitter: 0) == .reconnect(after: .milliseconds(200)))
    }

    @Test("204 finishes; other statuses and a 200 that is not an event stream fail; so do fatal errors and cancellation")
    func stops() {
        var rules = rules()
        #expect(rules.responseArrived(status: 204, mimeType: nil, retryAfter: nil, jitter: 0) == .finish)
        for status in [201, 301, 304, 400, 401, 403, 404, 410] {
            #expect(rules.responseArrived(status: status, mimeType: "text/event-stream", retryAfter: nil, jitter: 0) == .fail)
        }
        #expect(rules.responseArrived(status: 200, mimeType: "text/html", retryAfter: nil, jitter: 0) == .fail)
        #expect(rules.responseArrived(status: 200, mimeType: nil, retryAfter: nil, jitter: 0) == .fail)
        #expect(rules.connectFailed(.fatal, reachability: nil, jitter: 0) == .fail)
        #expect(rules.connectFailed(.cancelled, reachability: nil, jitter: 0) == .fail)
        #expect(rules.consecutiveFailures == 0)
    }

    @Test("past maximumConsecutiveFailures the source gives up")
    func maximumFailures() {
        var rules = rules { $0.maximumConsecutiveFailures = 2 }
        #expect(rules.connectFailed(.transient, reachability: nil, jitter: 0) == .reconnect(after: .seconds(1)))
        #expect(rules.responseArrived(status: 503, mimeType: nil, retryAfter: nil, jitter: 0) == .reconnect(after: .seconds(2)))
        #expect(rules.responseArrived(status: 503, mimeType: nil, retryAfter: nil, jitter: 0) == .fail)
    }

    @Test("an unreachable host waits for connectivity only when asked and reachability says not reachable")
    func connectivity() {
        var off = rules()
        #expect(off.connectFailed(.unreachable, reachability: .notReachable, jitter: 0) == .reconnect(after: .seconds(1)))
        var on = rules { $0.waitsForConnectivity = .seconds(30) }
        #expect(on.connectFailed(.unreachable, reachability: .notReachable, jitter: 0) == .waitForConnectivity(atMost: .seconds(30)))
        #expect(on.connectFailed(.unreachable, reachability: .reachableViaWiFi, jitter: 0) == .reconnect(after: .seconds(2)))
        #expect(on.connectFailed(.unreachable, reachability: .unknown, jitter: 0) == .reconnect(after: .seconds(4)))
        #expect(on.connectFailed(.transient, reachability: .notReachable, jitter: 0) == .reconnect(after: .seconds(8)))
        var limited = rules {
            $0.waitsForConnectivity = .seconds(30)
            $0.maximumConsecutiveFailures = 0
        }
        #expect(limited.connectFailed(.unreachable, reachability: .notReachable, jitter: 0) == .fail)
    }

    @Test("errors are sorted into transient, unreachable, cancelled and fatal")
    func failureKinds() {
        #expect(EventSourceReconnection.failureKind(of: CourierError.cannotConnect(url: nil, reason: "refused")) == .unreachable)
        #expect(EventSourceReconnection.failureKind(of: CourierError.connectionLost(url: nil, reason: "reset")) == .transient)
        #expect(EventSourceReconnection.failureKind(of: CourierError.timedOut(url: nil, reason: "read timeout")) == .transient)
        #expect(EventSourceReconnection.failureKind(of: CourierError.cancelled(url: nil)) == .cancelled)
        #expect(EventSourceReconnection.failureKind(of: CancellationError()) == .cancelled)
        #expect(EventSourceReconnection.failureKind(of: CourierError.serverTrustRejected(host: "h", reason: "r")) == .fatal)
        #expect(
            EventSourceReconnection.failureKind(
                of: CourierError.responseBodyTooLarge(url: nil, limit: 1, contentLength: nil, received: 2)) == .fatal)
    }
}
