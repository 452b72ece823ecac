@testable import Courier
import CourierEngine
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task's state machine with plain values: no engine, no server, no lock.
@Suite("Task state machine")
struct TaskStateMachineTests {
    typealias Machine = TaskStateMachine

    static let next = URLRequest(url: URL(string: "http://example.com/next")!)

    func machine(_ destination: Machine.BodyDestination = .memory, redirects: Int = 16, limit: Int64? = nil) -> Machine {
        Machine(destination: destination, maximumRedirects: redirects, maximumBodySize: limit)
    }

    /// A machine resumed and with its exchange handed over.
    func running(_ destination: Machine.BodyDestination = .memory, redirects: Int = 16, limit: Int64? = nil) -> Machine {
        var machine = machine(destination, redirects: redirects, limit: limit)
        #expect(machine.resume(hasRequest: true) == .start)
        #expect(machine.exchangeStarted() == .init(cancel: false, pause: false))
        return machine
    }

    // MARK: - Lifecycle

    @Test func aNewTaskIsSuspendedAndStartsOnce() {
        var machine = machine()
        #expect(machine.state == .suspended)
        #expect(!machine.started)
        #expect(machine.resume(hasRequest: true) == .start)
        #expect(machine.state == .running)
        #expect(machine.resume(hasRequest: true) == .none)
        #expect(machine.suspend() == true)
        #expect(machine.suspend() == false)
        #expect(machine.state == .suspended)
        #expect(machine.resume(hasRequest: true) == .resumeExchange)
        #expect(machine.lifecycle == .running)
    }

    @Test func aTaskOfAnInvalidatedSessionFailsWhenResumed() {
        var machine = machine()
        #expect(machine.resume(hasRequest: false) == .failInvalidated)
        #expect(machine.claimCompletion() == true)
    }

    @Test func cancelWhileSuspendedBeforeStartCompletesAtOnce() {
        var machine = machine()
        #expect(machine.cancel() == .completeCancelled)
        #expect(machine.state == .cancelling)
        #expect(machine.cancel() == .none)
        #expect(machine.resume(hasRequest: true) == .none)
        #expect(machine.claimCompletion() == true)
    }

    @Test func cancelWhileRunningCancelsTheExchangeAndItsEndReportsCancellation() {
        var machine = running()
        #expect(machine.cancel() == .cancelExchange)
        let end = machine.exchangeEnded(error: .cancelled)
        guard case .complete(true, .cancelled?) = end else {
            Issue.record("expected a cancelled completion, got \(end)")
            return
        }
    }

    @Test func cancelWhileSuspendedAfterStartCancelsTheExchange() {
        var machine = running()
        #expect(machine.suspend() == true)
        #expect(machine.cancel() == .cancelExchange)
        #expect(machine.lifecycle == .canceling)
    }

    @Test func anExchangeHandedOverAfterCancelOrSuspendIsCancelledOrPaused() {
        var cancelled = machine()
        _ = cancelled.resume(hasRequest: true)
        #expect(cancelled.cancel() == .completeCancelled)
        #expect(cancelled.exchangeStarted() == .init(cancel: true, pause: false))

        var suspended = machine()
        _ = suspended.resume(hasRequest: true)
        #expect(suspended.suspend() == true)
        #expect(suspended.exchangeStarted() == .init(cancel: false, pause: true))
    }

    @Test func completionIsClaimedExactlyOnce() {
        var machine = running()
        let end = machine.exchangeEnded(error: nil)
        #expect(end.isComplete(withResponse: true, ending: nil))
        #expect(machine.claimCompletion() == true)
        #expect(machine.claimCompletion() == false)
        #expect(machine.state == .completed)
        // A cancel between the claim and the delivery completes again, which is ignored.
        #expect(machine.cancel() == .completeCancelled)
        #expect(machine.claimCompletion() == false)
        machine.finished()
        #expect(machine.cancel() == .none)
        #expect(machine.suspend() == false)
        #expect(machine.resume(hasRequest: true) == .none)
    }

    @Test func lateEventsAfterCompletionChangeNothing() {
        var machine = running()
        _ = machine.exchangeEnded(error: nil)
        #expect(machine.claimCompletion() == true)
        machine.finished()
        #expect(!machine.hasExchange)
        #expect(machine.setReadingPaused(true, by: .callbackQueue) == .none)
        #expect(machine.setReadingPaused(false, by: .callbackQueue) == .none)
        #expect(machine.requestResumeData() == false)
        #expect(machine.cancel() == .none)
        #expect(machine.claimCompletion() == false)
        #expect(machine.state == .completed)
    }

    // MARK: - Reading

    @Test func readingRestartsOnlyWhenEveryReasonIsGoneAndTheTaskIsNotSuspended() {
        var machine = running(.file)
        #expect(machine.setReadingPaused(true, by: .callbackQueue) == .pauseReading)
        #expect(machine.setReadingPaused(true, by: .stream) == .pauseReading)
        #expect(machine.setReadingPaused(false, by: .callbackQueue) == .none)
        #expect(machine.suspend() == true)
        #expect(machine.setReadingPaused(false, by: .stream) == .none)
        #expect(machine.resume(hasRequest: true) == .resumeExchange)
        #expect(machine.setReadingPaused(true, by: .stream) == .pauseReading)
        #expect(machine.setReadingPaused(false, by: .stream) == .resumeReading)
    }

    @Test func withoutAnExchangeReadingIsNotTouched() {
        var machine = machine()
        #expect(machine.setReadingPaused(true, by: .callbackQueue) == .none)
        #expect(machine.setReadingPaused(false, by: .callbackQueue) == .none)
    }

    // MARK: - Hops

    @Test func aRedirectDiscardsItsBodyAndSendsTheNextHop() {
        var machine = running()
        machine.redirectDecided(Self.next)
        #expect(machine.state == .redirecting)
        #expect(machine.receivedBodyChunk(count: 10) == .discard)
        guard case .sendNextHop(let request) = machine.exchangeEnded(error: nil) else {
            Issue.record("expected the next hop")
            return
        }
        #expect(request.url == Self.next.url)
        #expect(machine.redirects == 1)
        #expect(machine.state == .running)
        #expect(!machine.hasExchange)
        #expect(machine.exchangeStarted() == .init(cancel: false, pause: false))
        #expect(machine.receivedBodyChunk(count: 10) == .gather(received: 10))
    }

    @Test func redirectsPastTheLimitFailWithoutTheResponse() {
        var machine = running(redirects: 1)
        machine.redirectDecided(Self.next)
        guard case .sendNextHop = machine.exchangeEnded(error: nil) else {
            Issue.record("the first redirect is followed")
            return
        }
        _ = machine.exchangeStarted()
        machine.redirectDecided(Self.next)
        let end = machine.exchangeEnded(error: nil)
        guard case .complete(false, .error(let error)?) = end, case .tooManyRedirects(let url, 1) = error else {
            Issue.record("expected tooManyRedirects, got \(end)")
            return
        }
        #expect(url == Self.next.url)
    }

    @Test func cancelWhileRedirectingEndsBeforeTheNextHop() {
        var machine = running()
        machine.redirectDecided(Self.next)
        #expect(machine.cancel() == .cancelExchange)
        // The exchange managed to finish cleanly before the cancellation took effect.
        let end = machine.exchangeEnded(error: nil)
        guard case .complete(false, .error(let error)?) = end, case .cancelled(let url) = error else {
            Issue.record("expected a cancellation for the next hop, got \(end)")
            return
        }
        #expect(url == Self.next.url)
    }

    @Test func anAnsweredChallengeSendsTheRetryWithoutCountingARedirect() {
        var machine = running(redirects: 0)
        machine.authenticationDecided(Self.next)
        #expect(machine.state == .authenticating)
        #expect(machine.receivedBodyChunk(count: 5) == .discard)
        guard case .sendNextHop(let retry) = machine.exchangeEnded(error: nil) else {
            Issue.record("expected the retry")
            return
        }
        #expect(retry.url == Self.next.url)
        #expect(machine.redirects == 0)
    }

    @Test func aChallengeCancelledByItsBlockDeliversThe401AsCancelled() {
        var machine = running()
        machine.challengeCancelled()
        #expect(machine.receivedFinalHead(expectedLength: -1) == .none)
        let end = machine.exchangeEnded(error: .cancelled)
        guard case .complete(true, .cancelled?) = end else {
            Issue.record("expected cancelled, got \(end)")
            return
        }
    }

    @Test func anEngineFailureIsReportedAsSuch() {
        var machine = running()
        let end = machine.exchangeEnded(error: .connectionLost("reset"))
        guard case .complete(true, .engine(.connectionLost("reset"))?) = end else {
            Issue.record("expected the engine's error, got \(end)")
            return
        }
    }

    // MARK: - Body

    @Test func theBodyGoesWhereTheTaskSendsIt() {
        var memory = running(.memory)
        #expect(memory.receivedFinalHead(expectedLength: 4) == .none)
        #expect(memory.receivedBodyChunk(count: 4) == .gather(received: 4))
        var stream = running(.stream)
        #expect(stream.receivedFinalHead(expectedLength: -1) == .deliverHeadToStream)
        #expect(stream.receivedBodyChunk(count: 4) == .stream(received: 4))
    }

    @Test func aBodyOverTheLimitFailsOnceAndTheFailureWins() {
        var announced = running(limit: 10)
        #expect(announced.receivedFinalHead(expectedLength: 11) == .failBodyTooLarge(limit: 10, contentLength: 11))

        var machine = running(limit: 10)
        #expect(machine.receivedFinalHead(expectedLength: -1) == .none)
        #expect(machine.receivedBodyChunk(count: 6) == .gather(received: 6))
        #expect(machine.receivedBodyChunk(count: 6) == .failBodyTooLarge(limit: 10, received: 12))
        #expect(machine.fail(.responseBodyTooLarge(url: nil, limit: 10, contentLength: nil, received: 12)) == true)
        #expect(machine.receivedBodyChunk(count: 6) == .discard)
        let end = machine.exchangeEnded(error: .cancelled)
        guard case .complete(true, .error(.responseBodyTooLarge(_, 10, nil, 12))?) = end else {
            Issue.record("expected the limit's error, got \(end)")
            return
        }
    }

    @Test func aStreamHasNoMemoryLimit() {
        var stream = running(.stream, limit: 1)
        #expect(stream.receivedFinalHead(expectedLength: 100) == .deliverHeadToStream)
        #expect(stream.receivedBodyChunk(count: 100) == .stream(received: 100))
    }

    // MARK: - Download file

    @Test func theDownloadFileIsOpenedOnceAndWrittenOnlyWhenOpen() {
        var machine = running(.file)
        #expect(machine.receivedFinalHead(expectedLength: 10) == .openDownloadFile)
        #expect(machine.receivedBodyChunk(count: 3) == .discard)  // not open yet
        machine.downloadFileOpened(resumedAt: nil)
        #expect(machine.receivedBodyChunk(count: 3) == .write(received: 3))
        #expect(machine.receivedFinalHead(expectedLength: 10) == .none)
    }

    @Test func aResumedDownloadCountsFromItsOffset() {
        var machine = running(.file)
        #expect(machine.receivedFinalHead(expectedLength: 10) == .openDownloadFile)
        machine.downloadFileOpened(resumedAt: 100)
        #expect(machine.receivedBodyChunk(count: 10) == .write(received: 110))
    }

    @Test func aDownloadAlreadyCompleteOrRefusedWritesNothing() {
        var complete = running(.file)
        _ = complete.receivedFinalHead(expectedLength: 0)
        complete.downloadAlreadyComplete()
        #expect(complete.receivedBodyChunk(count: 3) == .discard)
        #expect(complete.downloadFile == .alreadyComplete)

        var refused = running(.file)
        _ = refused.receivedFinalHead(expectedLength: 0)
        #expect(refused.fail(.invalidResumeResponse(url: nil, reason: "elsewhere")) == true)
        #expect(refused.downloadFile == .failed)
        #expect(refused.receivedBodyChunk(count: 3) == .discard)
        #expect(refused.receivedFinalHead(expectedLength: 0) == .none)
    }

    @Test func aDataTaskThatBecomesADownloadWritesToTheFile() {
        var machine = running(.memory)
        machine.becameDownload()
        #expect(machine.isDownload)
        #expect(machine.receivedFinalHead(expectedLength: 10) == .openDownloadFile)
    }

    @Test func aFailureBeforeTheExchangeExistsCancelsItWhenHandedOver() {
        var machine = machine(.file)
        _ = machine.resume(hasRequest: true)
        #expect(machine.fail(.cannotWriteDownloadFile(path: "/x", reason: "no")) == false)
        #expect(machine.exchangeStarted() == .init(cancel: true, pause: false))
    }

    // MARK: - Resume data

    @Test func resumeDataIsAskedForOnceAndNotAfterCompletion() {
        var machine = running(.file)
        #expect(machine.requestResumeData() == true)
        #expect(machine.requestResumeData() == false)
        #expect(machine.cancel() == .cancelExchange)
        _ = machine.exchangeEnded(error: .cancelled)
        #expect(machine.claimCompletion() == true)
        #expect(machine.resumeDataRequested)

        var done = running(.file)
        _ = done.exchangeEnded(error: nil)
        #expect(done.claimCompletion() == true)
        #expect(done.requestResumeData() == false)
    }
}

extension TaskStateMachine.EndAction {
    func isComplete(withResponse expected: Bool, ending: TaskStateMachine.Ending?) -> Bool {
        guard case .complete(let withResponse, let actual) = self, withResponse == expected else { return false }
        return (actual == nil) == (ending == nil)
    }
}
