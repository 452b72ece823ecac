import BenchSupport
import Foundation
import Synchronization

extension RunOne {
    /// `count` GETs with `inFlight` outstanding at any time (a sliding window, as
    /// ``concurrent(_:_:count:inFlight:progress:)``), each one timed from the call to its
    /// answer (collected body included). The task group's loop records the latencies, so no
    /// lock is taken per request; the histogram has a fixed size whatever the count.
    ///
    /// - Returns: The body bytes received and the latencies of the requests that succeeded.
    static func concurrentTimed(
        _ client: any BenchClient,
        _ url: URL,
        count: Int,
        inFlight: Int,
        progress: Progress
    ) async -> (bytes: Int64, latencies: LatencyHistogram) {
        await withTaskGroup(of: (bytes: Int64, nanoseconds: Int64?).self) { group in
            var next = 0
            var total: Int64 = 0
            var latencies = LatencyHistogram()
            func add(_ index: Int) {
                group.addTask {
                    defer { progress.finished.add(1, ordering: .relaxed) }
                    let start = ContinuousClock.now
                    do {
                        let bytes = try await client.get(url)
                        let (seconds, attoseconds) = (ContinuousClock.now - start).components
                        return (Int64(bytes), seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                    } catch {
                        progress.fail(index, error)
                        return (0, nil)
                    }
                }
            }
            while next < min(inFlight, count) {
                add(next)
                next += 1
            }
            while let result = await group.next() {
                total += result.bytes
                if let nanoseconds = result.nanoseconds { latencies.record(nanoseconds: nanoseconds) }
                if next < count {
                    add(next)
                    next += 1
                }
            }
            return (total, latencies)
        }
    }
}
