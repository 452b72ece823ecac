import Foundation
import Testing

@testable import Courier

/// AFImageDownloader's bookkeeping (merging, the active limit, FIFO/LIFO, cancellation) driven
/// with plain values: jobs are strings, handlers are ints.
@Suite struct ImageDownloadQueueTests {
    typealias Queue = ImageDownloadQueue<String, Int>

    static func job(_ outcome: Queue.AddOutcome) -> (kind: String, job: String) {
        switch outcome {
        case .merged(let job): return ("merged", job)
        case .start(let job): return ("start", job)
        case .queued(let job): return ("queued", job)
        }
    }

    func add(_ queue: inout Queue, _ url: String, receipt: UUID = UUID(), handler: Int = 0) -> (kind: String, job: String) {
        Self.job(queue.add(urlIdentifier: url, receiptID: receipt, handler: handler) { _ in "job:\(url)" })
    }

    @Test func identicalURLsMergeIntoOneJob() {
        var queue = Queue(order: .fifo, maximumActive: 4)
        #expect(add(&queue, "a", handler: 1) == ("start", "job:a"))
        #expect(add(&queue, "a", handler: 2) == ("merged", "job:a"))
        #expect(queue.activeCount == 1)
        let done = queue.complete(taskID: queue.merged["a"]!.id, urlIdentifier: "a")
        #expect(done.handlers == [1, 2])
        #expect(queue.activeCount == 0 && queue.merged.isEmpty)
    }

    @Test func aFifthWaitsForAFreeSlotInFIFOOrder() {
        var queue = Queue(order: .fifo, maximumActive: 4)
        for url in ["1", "2", "3", "4"] { #expect(add(&queue, url).kind == "start") }
        #expect(add(&queue, "5").kind == "queued")
        #expect(add(&queue, "6").kind == "queued")
        #expect(add(&queue, "5").kind == "merged")  // merging works while queued too
        let done = queue.complete(taskID: queue.merged["2"]!.id, urlIdentifier: "2")
        #expect(done.jobsToStart == ["job:5"])
        #expect(queue.activeCount == 4 && queue.queuedCount == 1)
    }

    @Test func lifoStartsTheNewestFirst() {
        var queue = Queue(order: .lifo, maximumActive: 1)
        #expect(add(&queue, "first").kind == "start")
        for url in ["a", "b", "c"] { #expect(add(&queue, url).kind == "queued") }
        var started: [String] = []
        var current = "first"
        for _ in 0..<3 {
            let done = queue.complete(taskID: queue.merged[current]!.id, urlIdentifier: current)
            started += done.jobsToStart
            current = String(done.jobsToStart[0].dropFirst(4))
        }
        #expect(started == ["job:c", "job:b", "job:a"])
    }

    @Test func cancellingOneOfTwoReceiptsKeepsTheJob() {
        var queue = Queue(order: .fifo, maximumActive: 4)
        let first = UUID()
        let second = UUID()
        _ = add(&queue, "a", receipt: first, handler: 1)
        _ = add(&queue, "a", receipt: second, handler: 2)
        let cancelled = queue.cancel(receiptID: first, urlIdentifier: "a")
        #expect(cancelled.handler == 1 && cancelled.jobToCancel == nil)
        let step1 = queue.cancel(receiptID: first, urlIdentifier: "a")
        #expect(step1.handler == nil)  // twice: ignored
        let last = queue.cancel(receiptID: second, urlIdentifier: "a")
        #expect(last.handler == 2 && last.jobToCancel == "job:a")
        #expect(queue.merged.isEmpty)
        #expect(queue.activeCount == 1)  // the slot is held until the cancelled task completes
    }

    @Test func aCancelledQueuedJobNeverStartsAndALateCompletionIsIgnored() {
        var queue = Queue(order: .fifo, maximumActive: 1)
        _ = add(&queue, "running")
        let receipt = UUID()
        _ = add(&queue, "waiting", receipt: receipt)
        let waitingID = queue.merged["waiting"]!.id
        let step2 = queue.cancel(receiptID: receipt, urlIdentifier: "waiting")
        #expect(step2.jobToCancel == "job:waiting")
        #expect(queue.queuedCount == 0)
        // Its cancelled task completes without ever having run: nothing is freed or delivered.
        let late = queue.complete(taskID: waitingID, urlIdentifier: "waiting")
        #expect(late.handlers.isEmpty && late.jobsToStart.isEmpty && queue.activeCount == 1)
        // A new request for the URL gets a new task, not the cancelled one's completion.
        let newer = UUID()
        _ = add(&queue, "waiting", receipt: newer, handler: 7)
        let step3 = queue.complete(taskID: waitingID, urlIdentifier: "waiting")
        #expect(step3.handlers.isEmpty)
        #expect(queue.merged["waiting"] != nil)
    }
}

/// AFNetworkActivityIndicatorManager's state machine with plain values and made-up times.
@Suite struct NetworkActivityIndicatorStateMachineTests {
    typealias Machine = NetworkActivityIndicatorStateMachine

    @Test func showsAfterTheActivationDelayAndHidesAfterTheCompletionDelay() {
        var machine = Machine()
        let step4 = machine.activityChanged(isActivityOccurring: true, isEnabled: true, now: 10)
        #expect(step4 == [.wake(at: 11)])
        #expect(machine.state == .delayingStart(until: 11))
        let step5 = machine.timerFired(isActivityOccurring: true, now: 10.5)
        #expect(step5 == [])  // early: ignored
        let step6 = machine.timerFired(isActivityOccurring: true, now: 11)
        #expect(step6 == [.setVisible(true)])
        #expect(machine.state == .active)
        let step7 = machine.activityChanged(isActivityOccurring: false, isEnabled: true, now: 20)
        #expect(step7 == [.wake(at: 20.17)])
        let step8 = machine.timerFired(isActivityOccurring: false, now: 20.17)
        #expect(step8 == [.setVisible(false)])
        #expect(machine.state == .notActive && !machine.isVisible)
    }

    @Test func aRequestShorterThanTheActivationDelayShowsNothing() {
        var machine = Machine()
        let step9 = machine.activityChanged(isActivityOccurring: true, isEnabled: true, now: 0)
        #expect(step9 == [.wake(at: 1)])
        let step10 = machine.activityChanged(isActivityOccurring: false, isEnabled: true, now: 0.3)
        #expect(step10 == [])
        let step11 = machine.timerFired(isActivityOccurring: false, now: 1)
        #expect(step11 == [])
        #expect(machine.state == .notActive && !machine.isVisible)
    }

    @Test func renewedActivityDuringTheEndDelayKeepsItShown() {
        var machine = Machine()
        _ = machine.activityChanged(isActivityOccurring: true, isEnabled: true, now: 0)
        _ = machine.timerFired(isActivityOccurring: true, now: 1)
        let step12 = machine.activityChanged(isActivityOccurring: false, isEnabled: true, now: 2)
        #expect(step12 == [.wake(at: 2.17)])
        let step13 = machine.activityChanged(isActivityOccurring: true, isEnabled: true, now: 2.1)
        #expect(step13 == [])  // back to active, still shown
        #expect(machine.state == .active)
        let step14 = machine.timerFired(isActivityOccurring: true, now: 2.17)
        #expect(step14 == [])  // stale timer
        #expect(machine.isVisible)
    }

    @Test func disabledDoesNothingAndDisablingHides() {
        var machine = Machine()
        let step15 = machine.activityChanged(isActivityOccurring: true, isEnabled: false, now: 0)
        #expect(step15 == [])
        _ = machine.activityChanged(isActivityOccurring: true, isEnabled: true, now: 0)
        _ = machine.timerFired(isActivityOccurring: true, now: 1)
        let step16 = machine.disable()
        #expect(step16 == [.setVisible(false)])
        let step17 = machine.disable()
        #expect(step17 == [])
    }

    @Test func badDelaysAreReadAsZero() {
        var machine = Machine(activationDelay: -.infinity, completionDelay: .nan)
        let step18 = machine.activityChanged(isActivityOccurring: true, isEnabled: true, now: 5)
        #expect(step18 == [.wake(at: 5)])
        let step19 = machine.timerFired(isActivityOccurring: true, now: 5)
        #expect(step19 == [.setVisible(true)])
        let step20 = machine.activityChanged(isActivityOccurring: false, isEnabled: true, now: 6)
        #expect(step20 == [.wake(at: 6)])
    }
}
