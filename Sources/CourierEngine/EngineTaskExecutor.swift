public import NIOCore

/// A Swift concurrency `TaskExecutor` that runs tasks on one of the engine's event loops.
///
/// A request awaited from the cooperative thread pool crosses threads twice: the request
/// hops onto the connection's event loop, and its answer wakes a pool thread to resume the
/// caller. On a busy client those hand-offs (a futex wake, a context switch, cache lines moving
/// between cores) cost more than the HTTP work itself. Tasks that prefer this executor run on
/// the event loop, and connections they open live on the same loop
/// (the pool opens a connection on the caller's loop when the caller runs on one), so
/// submitting a request, its I/O and resuming the caller stay on one thread.
///
/// ```swift
/// let engine = try HTTPEngine()
/// try await withTaskExecutorPreference(engine.taskExecutor) {
///     for _ in 0..<100 {
///         _ = try await engine.collect(EngineRequest(url: url))
///     }
/// }
/// ```
///
/// Use it for code that mostly waits on requests (fan-out, crawlers, proxies, benchmarks);
/// keep CPU-heavy work (large JSON decoding, image processing) off it, since a task running
/// here holds the loop that serves its connections. Never block on it (semaphores, `wait()`):
/// the work the task waits for needs the same thread. Jobs enqueued after the loop's group
/// has shut down are not run, so finish the tasks before shutting a custom group down.
public final class EngineTaskExecutor: TaskExecutor {
    /// The event loop the tasks run on.
    public let eventLoop: any EventLoop

    /// An executor on `eventLoop`. For requests to stay on it, the loop must belong to the
    /// engine's event loop group (``HTTPEngine/taskExecutor`` is one such executor).
    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Runs `job` on the event loop.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        eventLoop.execute {
            job.runSynchronously(on: executor)
        }
    }
}
