import NIOHTTP1
import Testing

@testable import CourierEngine

@Suite("HTTP1ConnectionStateMachine")
struct HTTP1ConnectionStateMachineTests {
    private func head(_ status: HTTPResponseStatus, keepAlive: Bool = true, version: HTTPVersion = .http1_1)
        -> HTTPResponseHead
    {
        var headers = HTTPHeaders()
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        return HTTPResponseHead(version: version, status: status, headers: headers)
    }

    @Test func simpleGetReturnsConnectionToPool() {
        var machine = HTTP1ConnectionStateMachine()
        #expect(machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false) == .sendRequestHead(sendBody: false))
        #expect(machine.requestBodySent() == .none)
        let ok = head(.ok)
        #expect(machine.receivedResponseHead(ok) == .forwardResponseHead(ok, abandonUpload: false))
        #expect(machine.receivedBodyPart() == .forwardBodyPart)
        #expect(machine.receivedResponseEnd() == .succeedRequest(.returnToPool))
        #expect(machine.isIdle)
        #expect(machine.requestsServed == 1)
    }

    @Test func responseEndingBeforeRequestIsSentWaitsThenCloses() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: true, expectsContinue: false, closeAfter: false)
        let tooLarge = head(.payloadTooLarge)
        #expect(machine.receivedResponseHead(tooLarge) == .forwardResponseHead(tooLarge, abandonUpload: false))
        // The server answered before reading the whole body: the connection can't be reused.
        #expect(machine.receivedResponseEnd() == .succeedRequest(.close))
        #expect(machine.state == .closing)
    }

    @Test func responseCompletesOnlyAfterBodySent() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        _ = machine.receivedResponseHead(head(.ok))
        // Bodiless request whose end write completes after the response: still clean.
        #expect(machine.requestBodySent() == .none)
        #expect(machine.receivedResponseEnd() == .succeedRequest(.returnToPool))
    }

    @Test func connectionCloseHeaderClosesAfterResponse() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        _ = machine.requestBodySent()
        _ = machine.receivedResponseHead(head(.ok, keepAlive: false))
        #expect(machine.receivedResponseEnd() == .succeedRequest(.close))
    }

    @Test func http10ResponseWithoutKeepAliveCloses() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        _ = machine.requestBodySent()
        _ = machine.receivedResponseHead(head(.ok, version: .http1_0))
        #expect(machine.receivedResponseEnd() == .succeedRequest(.close))
    }

    @Test func requestAskingToCloseCloses() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: true)
        _ = machine.requestBodySent()
        _ = machine.receivedResponseHead(head(.ok))
        #expect(machine.receivedResponseEnd() == .succeedRequest(.close))
    }

    @Test func expectContinueSendsBodyAfter100AndSkipsInterimHead() {
        var machine = HTTP1ConnectionStateMachine()
        #expect(machine.startRequest(hasBody: true, expectsContinue: true, closeAfter: false) == .sendRequestHead(sendBody: false))
        #expect(machine.receivedResponseHead(head(.continue)) == .sendBody)
        // An interim response never reaches the caller, and its end is ignored.
        #expect(machine.receivedResponseEnd() == .none)
        #expect(machine.receivedResponseHead(head(.processing)) == .none)
        #expect(machine.requestBodySent() == .none)
        let ok = head(.ok)
        #expect(machine.receivedResponseHead(ok) == .forwardResponseHead(ok, abandonUpload: false))
        #expect(machine.receivedResponseEnd() == .succeedRequest(.returnToPool))
    }

    @Test func finalResponseInsteadOf100AbandonsBodyAndCloses() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: true, expectsContinue: true, closeAfter: false)
        let denied = head(.expectationFailed)
        #expect(machine.receivedResponseHead(denied) == .forwardResponseHead(denied, abandonUpload: true))
        #expect(machine.receivedResponseEnd() == .succeedRequest(.close))
    }

    @Test func closeBeforeAnyResponseByteOnReusedConnectionIsRetryable() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        _ = machine.requestBodySent()
        _ = machine.receivedResponseHead(head(.ok))
        _ = machine.receivedResponseEnd()
        // Second request on the same connection; the server had closed it while idle.
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        guard case .failRequest(let error, .close, let replay) = machine.channelInactive() else {
            Issue.record("expected a failure")
            return
        }
        #expect(replay == .ifIdempotent, "the request was written: only an idempotent one may go again")
        #expect(error == .connectionLost("the server closed the connection before responding"))
    }

    /// A reset (or broken pipe) on a reused connection before any answer is the same stale
    /// connection as a clean close; an error that is not a lost connection is not.
    @Test func aResetBeforeAnyResponseByteOnAReusedConnectionIsReplayable() {
        func secondRequest() -> HTTP1ConnectionStateMachine {
            var machine = HTTP1ConnectionStateMachine()
            _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
            _ = machine.requestBodySent()
            _ = machine.receivedResponseHead(head(.ok))
            _ = machine.receivedResponseEnd()
            _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
            return machine
        }
        var reset = secondRequest()
        #expect(reset.errorCaught(.connectionLost("connection reset by peer")) == .failRequest(.connectionLost("connection reset by peer"), .close, replay: .ifIdempotent))
        var violation = secondRequest()
        #expect(violation.errorCaught(.protocolViolation("bad head")) == .failRequest(.protocolViolation("bad head"), .close, replay: .none))
        var unsent = secondRequest()
        #expect(unsent.requestHeadWriteFailed(.connectionLost("broken pipe")) == .failRequest(.connectionLost("broken pipe"), .close, replay: .unsent))
        var fresh = HTTP1ConnectionStateMachine()
        _ = fresh.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        #expect(fresh.errorCaught(.connectionLost("connection reset by peer")) == .failRequest(.connectionLost("connection reset by peer"), .close, replay: .none))
    }

    @Test func closeOnFreshConnectionIsNotRetryable() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        guard case .failRequest(_, _, let replay) = machine.channelInactive() else {
            Issue.record("expected a failure")
            return
        }
        #expect(replay == .none)
    }

    @Test func closeMidBodyIsConnectionLostAndNotRetryable() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        _ = machine.receivedResponseHead(head(.ok))
        #expect(machine.receivedResponseEnd() == .succeedRequest(.returnToPool))
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        _ = machine.receivedResponseHead(head(.ok))
        _ = machine.receivedBodyPart()
        guard case .failRequest(let error, .close, let replay) = machine.channelInactive() else {
            Issue.record("expected a failure")
            return
        }
        #expect(replay == .none)
        #expect(error == .connectionLost("the server closed the connection before the response was complete"))
    }

    @Test func idleConnectionClosingIsReportedOnce() {
        var machine = HTTP1ConnectionStateMachine()
        #expect(machine.channelInactive() == .connectionClosed)
        #expect(machine.channelInactive() == .none)
    }

    @Test func unsolicitedResponseOnIdleConnectionCloses() {
        var machine = HTTP1ConnectionStateMachine()
        #expect(machine.receivedResponseHead(head(.ok)) == .closeConnection)
    }

    @Test func abortFailsRunningRequestOnlyOnce() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: true, expectsContinue: false, closeAfter: false)
        #expect(machine.abort(.cancelled) == .failRequest(.cancelled, .close, replay: .none))
        #expect(machine.abort(.cancelled) == .none)
        #expect(machine.receivedResponseEnd() == .none)
    }

    @Test func errorWhileIdleClosesWithoutFailingAnything() {
        var machine = HTTP1ConnectionStateMachine()
        #expect(machine.errorCaught(.protocolViolation("x")) == .closeConnection)
        #expect(machine.channelInactive() == .connectionClosed)
    }
}

@Suite("HTTP1ConnectionStateMachine interim responses")
struct HTTP1InterimResponseBoundTests {
    @Test func interimHeadsBeyondTheBoundFailTheRequest() {
        var machine = HTTP1ConnectionStateMachine()
        _ = machine.startRequest(hasBody: false, expectsContinue: false, closeAfter: false)
        let hints = HTTPResponseHead(version: .http1_1, status: .init(statusCode: 103))
        for _ in 0..<HTTP1ConnectionStateMachine.maximumInterimResponses {
            #expect(machine.receivedResponseHead(hints) == .none)
        }
        let action = machine.receivedResponseHead(hints)
        guard case .failRequest(.protocolViolation(let reason), .close, replay: .none) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(reason.contains("more than \(HTTP1ConnectionStateMachine.maximumInterimResponses) interim (1xx) responses"))
        #expect(machine.state == .closing)
    }
}
