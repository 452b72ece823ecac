import BenchSupport
import Foundation
import Synchronization

extension RunOne {
    /// `count` GETs with `inFlight` outstanding at any time (a sliding window of workers, as
    /// ``concurrent(_:_:count:inFlight:progress:)``), each one timed from the call to its
    /// answer (collected body included). Each worker records its latencies in its own
    /// histogram, so no lock is taken per request; the histograms have a fixed size whatever
    /// the count and are merged at the end.
    ///
    /// - Returns: The body bytes received and the latencies of the requests that succeeded.
    static func concurrentTimed(
        _ client: any BenchClient,
        _ url: URL,
        count: Int,
        inFlight: Int,
        progress: Progress
    ) async -> (bytes: Int64, latencies: LatencyHistogram) {
        let tickets = RequestTickets(count: count)
        return await withTaskGroup(of: (bytes: Int64, latencies: LatencyHistogram).self) { group in
            for _ in 0..<min(inFlight, count) {
                group.addTask {
                    var bytes: Int64 = 0
                    var latencies = LatencyHistogram()
                    while let index = tickets.take() {
                        defer { progress.finished.add(1, ordering: .relaxed) }
                        let start = ContinuousClock.now
                        do {
                            bytes += Int64(try await client.get(url))
                            let (seconds, attoseconds) = (ContinuousClock.now - start).components
                            latencies.record(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                        } catch {
                            progress.fail(index, error)
                        }
                    }
                    return (bytes, latencies)
                }
            }
            var total: Int64 = 0
            var latencies = LatencyHistogram()
            for await result in group {
                total += result.bytes
                latencies.merge(result.latencies)
            }
            return (total, latencies)
        }
    }
}
