@testable import Courier
import CourierEngine
import Dispatch
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// The per-task callback queue: events handled in order, one at a time, and reading paused
/// while too much body waits behind a slow handler.
@Suite("Task callback queue")
struct TaskCallbackQueueTests {
    private static func body(_ bytes: Int) -> EngineEvent {
        .bodyPart(ByteBuffer(repeating: 0x61, count: bytes))
    }

    @Test func eventsAreHandledInOrderOneAtATime() async throws {
        let queue = TaskCallbackQueue(label: "test")
        let seen = Mutex<[Int]>([])
        let inside = Mutex(0)
        let overlapped = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        for index in 0..<200 {
            queue.deliver(Self.body(index + 1), setReadingPaused: { _ in }) { event in
                let now = inside.withLock { value -> Int in
                    value += 1
                    return value
                }
                if now > 1 { overlapped.withLock { $0 = true } }
                if case .bodyPart(let buffer) = event { seen.withLock { $0.append(buffer.readableBytes) } }
                inside.withLock { $0 -= 1 }
                if index == 199 { done.signal() }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                done.wait()
                continuation.resume()
            }
        }
        #expect(seen.withLock { $0 } == Array(1...200))
        #expect(!overlapped.withLock { $0 })
    }

    @Test func aSlowHandlerPausesReadingUntilTheBacklogDrains() async throws {
        let queue = TaskCallbackQueue(label: "test")
        let calls = Mutex<[Bool]>([])
        let gate = DispatchSemaphore(value: 0)
        let drained = DispatchSemaphore(value: 0)
        let record: @Sendable (Bool) -> Void = { paused in calls.withLock { $0.append(paused) } }
        // The first event's handler blocks until the test has queued 6 MiB more behind it.
        queue.deliver(Self.body(1 << 20), setReadingPaused: record) { _ in gate.wait() }
        for _ in 0..<6 {
            queue.deliver(Self.body(1 << 20), setReadingPaused: record) { _ in }
        }
        #expect(calls.withLock { $0 } == [true], "reading was not paused with 7 MiB waiting")
        queue.async { drained.signal() }
        gate.signal()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                drained.wait()
                continuation.resume()
            }
        }
        #expect(calls.withLock { $0 } == [true, false], "reading was not restarted once the backlog drained")
    }

    /// Waits (off the cooperative pool) until `semaphore` is signalled.
    private static func wait(for semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    @Test func anInlineEventIsHandledWhereItIsDeliveredWhenNothingWaits() {
        let queue = TaskCallbackQueue(label: "test")
        let handled = Mutex(false)
        queue.deliver(.responseHead(.init(version: .http1_1, status: .ok)), inline: true, setReadingPaused: { _ in }) { _ in
            handled.withLock { $0 = true }
        }
        // Inline and idle: handled before `deliver` returned, on this thread.
        #expect(handled.withLock { $0 })
    }

    @Test func anInlineEventWaitsBehindQueuedWorkAndKeepsTheOrder() async {
        let queue = TaskCallbackQueue(label: "test")
        let seen = Mutex<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        queue.deliver(Self.body(1), setReadingPaused: { _ in }) { _ in
            gate.wait()
            seen.withLock { $0.append(1) }
        }
        queue.deliver(Self.body(2), inline: true, setReadingPaused: { _ in }) { _ in seen.withLock { $0.append(2) } }
        #expect(seen.withLock { $0 }.isEmpty, "an inline event ran ahead of the queued one")
        queue.deliver(Self.body(3), inline: true, setReadingPaused: { _ in }) { _ in
            seen.withLock { $0.append(3) }
            done.signal()
        }
        gate.signal()
        await Self.wait(for: done)
        #expect(seen.withLock { $0 } == [1, 2, 3])
    }

    @Test func anEventDeliveredWhileOneIsHandledRunsAfterIt() {
        let queue = TaskCallbackQueue(label: "test")
        let log = Mutex<[String]>([])
        queue.deliver(Self.body(1), inline: true, setReadingPaused: { _ in }) { _ in
            log.withLock { $0.append("first begins") }
            // Re-entrant (a handler that cancels, and the engine answers at once): not nested.
            queue.deliver(Self.body(2), inline: true, setReadingPaused: { _ in }) { _ in log.withLock { $0.append("second") } }
            log.withLock { $0.append("first ends") }
        }
        #expect(log.withLock { $0 } == ["first begins", "first ends", "second"])
    }

    @Test func inlineHandlingHandsOffAtTheFirstJobThatMustRunOffThread() async {
        let queue = TaskCallbackQueue(label: "test")
        let seen = Mutex<[Int]>([])
        let delivered = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let waitedForTheDeliverer = Mutex<DispatchTimeoutResult?>(nil)
        queue.deliver(Self.body(1), inline: true, setReadingPaused: { _ in }) { _ in
            seen.withLock { $0.append(1) }
            // Queued while the inline handler runs: a job for the dispatch queue, then an
            // inline-allowed event behind it.
            queue.async {
                // Run inline, this would wait for `deliver` to return from inside it (a hang bound,
                // not a timing: it times out only if the job ran on the delivering thread).
                waitedForTheDeliverer.withLock { $0 = delivered.wait(timeout: .now() + 60) }
                seen.withLock { $0.append(2) }
            }
            queue.deliver(Self.body(3), inline: true, setReadingPaused: { _ in }) { _ in
                seen.withLock { $0.append(3) }
                done.signal()
            }
        }
        delivered.signal()
        await Self.wait(for: done)
        #expect(seen.withLock { $0 } == [1, 2, 3])
        #expect(waitedForTheDeliverer.withLock { $0 } == .success, "the queued job ran on the delivering thread")
    }

    /// The pause decided when the backlog passes 4 MiB and the resume decided when it drains
    /// reach the engine in that order even when the drain finishes before the pausing thread
    /// has told the engine (a loaded machine preempting the event loop there): reading must not
    /// stay paused. The pause call below is held until the queue has decided to resume and, for
    /// up to half a second, until that resume reaches the engine meanwhile (it did, before the
    /// fix, and then the late pause won).
    @Test func aResumeNeverOvertakesItsPause() async {
        let queue = TaskCallbackQueue(label: "test")
        let calls = Mutex<[Bool]>([])
        let firstHandler = DispatchSemaphore(value: 0)
        let drained = DispatchSemaphore(value: 0)
        let resumeArrived = DispatchSemaphore(value: 0)
        let chunk = 64 << 10
        let record: @Sendable (Bool) -> Void = { paused in
            if paused {
                firstHandler.signal()  // let the queue drain now
                _ = drained.wait(timeout: .now() + 60)
                _ = resumeArrived.wait(timeout: .now() + 0.5)
                calls.withLock { $0.append(true) }  // the engine is told only now
            } else {
                calls.withLock { $0.append(false) }
                resumeArrived.signal()
            }
        }
        // 64 chunks (4 MiB, not over the mark) queue behind a first handler that waits.
        queue.deliver(Self.body(chunk), setReadingPaused: record) { _ in firstHandler.wait() }
        for index in 1..<64 {
            // After the 50th, 15 chunks (960 KiB) are left: below 1 MiB, the queue decides to resume.
            queue.deliver(Self.body(chunk), setReadingPaused: record) { _ in if index == 49 { drained.signal() } }
        }
        // The 65th passes 4 MiB: this thread decides to pause and calls `record(true)`.
        let done = DispatchSemaphore(value: 0)
        queue.deliver(Self.body(chunk), setReadingPaused: record) { _ in done.signal() }
        queue.async { done.signal() }
        await Self.wait(for: done)
        await Self.wait(for: done)
        // Whatever the order of the threads, the engine was last told to read.
        _ = resumeArrived.wait(timeout: .now() + 60)
        #expect(calls.withLock { $0.last } == false, "reading stayed paused: \(calls.withLock { $0 })")
    }

    // MARK: - Monitor calls

    /// Waits until `condition` holds (the monitor queue runs on a thread of its own); records an
    /// issue instead of hanging when it never does.
    private static func eventually(_ condition: @escaping @Sendable () -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("the monitor calls were not made within 30 s")
                return
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func monitorCallsToldOutsideABurstGoToTheMonitorQueueAtOnce() async {
        let queue = TaskCallbackQueue(label: "test")
        let made = Mutex<[Int]>([])
        queue.tellMonitors { made.withLock { $0.append(1) } }
        queue.tellMonitors { made.withLock { $0.append(2) } }
        await Self.eventually { made.withLock { $0.count == 2 } }
        #expect(made.withLock { $0 } == [1, 2])
        let (waiting, _) = queue.takeMonitorCalls()
        #expect(waiting.isEmpty)
    }

    @Test func monitorCallsToldDuringABurstWaitForItsEndOrAreTakenByTheTasksEnd() async {
        let queue = TaskCallbackQueue(label: "test")
        let made = Mutex<[String]>([])
        // Handled by the queue's own thread (not inline): the calls go out when the burst ends.
        queue.deliver(Self.body(1), setReadingPaused: { _ in }) { _ in
            queue.tellMonitors { made.withLock { $0.append("head") } }
            #expect(made.withLock { $0 }.isEmpty, "not while the burst is handled")
        }
        await Self.eventually { made.withLock { $0 == ["head"] } }

        // A burst that ends the task: its end takes the calls and makes them itself.
        let taken = Mutex<[TaskCallbackQueue.MonitorCalls]>([])
        let ended = DispatchSemaphore(value: 0)
        queue.deliver(Self.body(1), setReadingPaused: { _ in }) { _ in
            queue.tellMonitors { made.withLock { $0.append("end") } }
            let (waiting, queued) = queue.takeMonitorCalls()
            #expect(!queued, "the head's calls were made already")
            taken.withLock { $0 = waiting }
            ended.signal()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                ended.wait()
                continuation.resume()
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        #expect(made.withLock { $0 } == ["head"], "taken calls are not sent to the monitor queue")
        for calls in taken.withLock({ $0 }) { calls() }
        #expect(made.withLock { $0 } == ["head", "end"])
    }

    @Test func monitorCallsThatCanWaitRideWithTheNextDueOnes() async {
        let queue = TaskCallbackQueue(label: "test")
        let made = Mutex<[String]>([])
        queue.tellMonitors({ made.withLock { $0.append("snapshot") } }, canWait: true)
        try? await Task.sleep(for: .milliseconds(50))
        #expect(made.withLock { $0 }.isEmpty, "a call that can wait starts nothing")
        queue.tellMonitors { made.withLock { $0.append("head") } }
        await Self.eventually { made.withLock { $0.count == 2 } }
        #expect(made.withLock { $0 } == ["snapshot", "head"])
    }

    @Test func theEndWaitsForCallsStillOnTheMonitorQueue() async {
        let monitors = MonitorEventQueue()
        let queue = TaskCallbackQueue(label: "test", monitorQueue: monitors)
        let gate = DispatchSemaphore(value: 0)
        let made = Mutex<[String]>([])
        queue.tellMonitors {
            gate.wait()
            made.withLock { $0.append("slow") }
        }
        let (waiting, queued) = queue.takeMonitorCalls()
        #expect(waiting.isEmpty && queued, "the slow call is on the monitor queue")
        queue.afterQueuedMonitorCalls { made.withLock { $0.append("end") } }
        gate.signal()
        await Self.eventually { made.withLock { $0.count == 2 } }
        #expect(made.withLock { $0 } == ["slow", "end"])
    }
}
