import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import CourierEngine

/// `ResumeBatch`: resumes queued on an event loop run together after the loop's current work,
/// in order; off a loop they run at once.
@Suite struct ResumeBatchTests {
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func resumesOnALoopRunAfterTheCurrentWorkInOrder() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let log = Log()
        try await loop.submit {
            ResumeBatch.run { log.add("first") }
            ResumeBatch.run { log.add("second") }
            log.add("end of the task")
        }.get()
        // The batch drains in a task queued behind the one that filled it.
        try await loop.submit {}.get()
        #expect(log.all == ["end of the task", "first", "second"])

        // A later tick gets a batch of its own.
        try await loop.submit {
            ResumeBatch.run { log.add("third") }
        }.get()
        try await loop.submit {}.get()
        #expect(log.all.last == "third")
        try await group.shutdownGracefully()
    }

    /// A resume that leads to another one on the loop puts it in the next batch, which runs.
    @Test func aResumeQueuedByAResumeRunsInTheNextBatch() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = Log()
        try await group.next().submit {
            ResumeBatch.run {
                log.add("outer")
                ResumeBatch.run { log.add("inner") }
            }
        }.get()
        try await group.next().submit {}.get()
        try await group.next().submit {}.get()
        #expect(log.all == ["outer", "inner"])
        try await group.shutdownGracefully()
    }

    /// Resumes queued on a loop whose group is shutting down still run (the loop drains its
    /// own tasks before its thread exits): no awaiting caller is left hanging.
    @Test func resumesQueuedAsTheGroupShutsDownStillRun() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let ran = Mutex(0)
        for _ in 0..<100 {
            loop.execute {
                ResumeBatch.run { ran.withLock { $0 += 1 } }
            }
        }
        try await group.shutdownGracefully()
        #expect(ran.withLock { $0 } == 100)
    }

    @Test func offALoopTheResumeRunsAtOnce() {
        let log = Log()
        ResumeBatch.run { log.add("now") }
        #expect(log.all == ["now"])
    }
}
