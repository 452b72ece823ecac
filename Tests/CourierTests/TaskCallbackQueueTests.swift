@testable import Courier
import CourierEngine
import Dispatch
import NIOCore
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
}
