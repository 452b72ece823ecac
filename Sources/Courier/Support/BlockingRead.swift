import Dispatch
import NIOPosix

/// Runs blocking reads (files, a caller's `InputStream`) away from NIO's event loops and from
/// Swift's cooperative thread pool, whose few threads every Swift task shares.
enum BlockingRead {
    /// On NIO's thread pool, as the engine's own file bodies are read: for reads that end by
    /// themselves (a regular file).
    static func onThreadPool<T: Sendable>(_ read: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(read)
    }

    /// On `queue`, a serial queue owned by one stream: for reads that may wait for as long as
    /// their writer likes (a pipe, a socket, the caller's own stream class). Such a read holds
    /// a thread of its own, never one of the thread pool's, so it can't starve file reads.
    static func on<T: Sendable>(_ queue: DispatchQueue, _ read: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try read() }) }
        }
    }

    /// `seconds` as nanoseconds for `Task.sleep`, clamped so that no delay traps (a year at
    /// most; negative or NaN is none).
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        let capped = min(seconds, 365 * 24 * 3600)
        return UInt64(capped * 1_000_000_000)
    }
}
