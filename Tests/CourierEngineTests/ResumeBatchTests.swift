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

    @Test func offALoopTheResumeRunsAtOnce() {
        let log = Log()
        ResumeBatch.run { log.add("now") }
        #expect(log.all == ["now"])
    }
}
