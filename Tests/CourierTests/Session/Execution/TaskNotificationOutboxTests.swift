@testable import Courier
import Foundation
import Synchronization
import Testing

/// ``TaskNotificationOutbox``'s order rule, with plain closures: the first to enqueue posts;
/// whatever is enqueued while it posts is posted by it afterwards, in order; nobody waits.
@Suite("task notification outbox")
struct TaskNotificationOutboxTests {
    /// What was posted, in order.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var values: [String] { entries.withLock { $0 } }
    }

    @Test("alone, the one who enqueues posts, and the turn is free again afterwards")
    func aloneItPostsItsOwn() {
        let outbox = TaskNotificationOutbox()
        let log = Log()
        var made = 0
        let first = outbox.enqueue({ made += 1; return { log.append("queued a") } })
        #expect(first)
        outbox.drain { log.append("a") }
        let second = outbox.enqueue({ made += 1; return { log.append("queued b") } })
        #expect(second)
        outbox.drain { log.append("b") }
        #expect(log.values == ["a", "b"])
        #expect(made == 0, "no post is made for the queue when nobody else posts")
    }

    @Test("posts enqueued while one is being posted are posted after it, in order, by the thread with the turn")
    func postsEnqueuedDuringAPostFollowIt() {
        let outbox = TaskNotificationOutbox()
        let log = Log()
        let turn = outbox.enqueue({ { log.append("queued resume") } })
        #expect(turn)
        outbox.drain {
            log.append("resume")
            // A suspension and a completion (another thread, or an observer calling back) now.
            let suspendTurn = outbox.enqueue({ { log.append("suspend") } })
            let completeTurn = outbox.enqueue({ { log.append("complete") } })
            #expect(!suspendTurn && !completeTurn)
            #expect(log.values == ["resume"], "left for the thread with the turn")
        }
        #expect(log.values == ["resume", "suspend", "complete"])
        let again = outbox.enqueue({ { log.append("queued") } })
        #expect(again, "the turn is free again")
        outbox.drain {}
    }

    @Test("a post enqueued by a queued post (an observer calling back) comes after it")
    func aQueuedPostCanEnqueueAnother() {
        let outbox = TaskNotificationOutbox()
        let log = Log()
        let turn = outbox.enqueue({ { log.append("queued") } })
        #expect(turn)
        outbox.drain {
            log.append("first")
            _ = outbox.enqueue({
                {
                    log.append("second")
                    _ = outbox.enqueue({ { log.append("third") } })
                }
            })
        }
        #expect(log.values == ["first", "second", "third"])
    }

    /// What the threads of ``manyThreadsPostInEnqueueOrder()`` share.
    final class Shared: Sendable {
        let outbox = TaskNotificationOutbox()
        /// Stands for the task's lock: the number a transition takes under it is its order.
        let transitions = Mutex<Int>(0)
        let posted = Mutex<[Int]>([])
        let posting = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)

        func post(_ number: Int) {
            if posting.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlapped.store(true, ordering: .sequentiallyConsistent) }
            posted.withLock { $0.append(number) }
            posting.subtract(1, ordering: .sequentiallyConsistent)
        }

        /// `count` transitions, each enqueueing its post under the lock and posting after it.
        func transition(times count: Int) {
            for _ in 0..<count {
                let (number, turn) = transitions.withLock { next in
                    defer { next += 1 }
                    let number = next
                    return (number, outbox.enqueue({ { self.post(number) } }))
                }
                if turn { outbox.drain { post(number) } }
            }
        }
    }

    @Test("many threads: every post once, in the order enqueued, never two at a time")
    func manyThreadsPostInEnqueueOrder() async {
        let shared = Shared()
        let threads = 4
        let perThread = 20_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<threads {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        Thread.detachNewThread {
                            shared.transition(times: perThread)
                            continuation.resume()
                        }
                    }
                }
            }
        }
        let values = shared.posted.withLock { $0 }
        #expect(values.count == threads * perThread)
        #expect(values == Array(0..<(threads * perThread)), "posted out of enqueue order")
        let overlaps = shared.overlapped.load(ordering: .sequentiallyConsistent)
        #expect(!overlaps)
        let free = shared.outbox.enqueue({ { shared.post(-1) } })
        #expect(free, "the turn is free at the end")
    }
}
