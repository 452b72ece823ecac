import Courier
import CourierTestServer
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// The issue-14 benchmark: 1,000 image requests over 100 distinct URLs through ImageDownloader
/// (requests reaching the server, wall time, peak RSS). Off unless COURIER_IMAGE_BENCH is set;
/// run it with `scripts/image-benchmark.sh`.
@Suite struct ImageDownloaderBenchmark {
    /// COURIER_IMAGE_BENCH: `burst` (all 1,000 asked for at once, image cache on), `waves` (ten
    /// waves of the 100 URLs, each after the previous one finished, image cache on) or
    /// `waves-nocache` (the same with no image cache). One mode per process, so that peak RSS is
    /// that mode's.
    static let mode = ProcessInfo.processInfo.environment["COURIER_IMAGE_BENCH"]

    /// `VmHWM` (peak resident set) of this process, in KiB, from /proc/self/status.
    static func peakRSSKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    @Test(.enabled(if: mode != nil))
    func thousandRequestsOverAHundredURLs() async throws {
        let mode = Self.mode ?? "burst"
        try await TestServer.withRunning { server in
            // The image defaults with the HTTP cache in memory only (a disk cache would carry
            // entries from one run to the next).
            var configuration = SessionConfiguration()
            configuration.timeoutIntervalForRequest = 60
            configuration.cache = HTTPCache(memoryCapacity: 20 << 20, diskCapacity: 0, directory: nil)
            let manager = URLSessionManager(configuration: configuration)
            manager.responseSerializer = ImageResponseSerializer()
            let downloader = ImageDownloader(
                sessionManager: manager,
                imageCache: mode == "waves-nocache" ? nil : AutoPurgingImageCache(purgesOnMemoryPressure: false))
            downloader.callbackQueue = DispatchQueue(label: "bench.callbacks")
            // Request i asks for URL (i * 37) % 100: each wave of 100 holds every URL once.
            let urls = (0..<1000).map { server.sessionURL("/image/png?id=\(($0 * 37) % 100)") }
            let waves = mode == "burst" ? [urls[...]] : stride(from: 0, to: 1000, by: 100).map { urls[$0..<($0 + 100)] }
            let done = Mutex((successes: 0, failures: 0, receipts: 0, hits: 0))
            let start = DispatchTime.now()
            var asked = 0
            for wave in waves {
                for url in wave {
                    let receipt = downloader.downloadImage(
                        for: URLRequest(url: url),
                        success: { _, response, _ in done.withLock { $0.successes += 1; if response == nil { $0.hits += 1 } } },
                        failure: { _, _, _ in done.withLock { $0.failures += 1 } })
                    if receipt != nil { done.withLock { $0.receipts += 1 } }
                }
                asked += wave.count
                // Polled every millisecond (not `eventually`'s 20 ms, which would add up to
                // 20 ms per wave to the wall time); 300 s hang bound.
                let deadline = DispatchTime.now().uptimeNanoseconds + 300_000_000_000
                while done.withLock({ $0.successes + $0.failures }) < asked {
                    try #require(DispatchTime.now().uptimeNanoseconds < deadline, "wave did not finish in 300 s")
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            let result = done.withLock { $0 }
            let sent = server.requestsReceived(forPath: "/image/png")
            print(String(
                format: "image-bench mode=%@ requests=%d server_requests=%d merged=%d image_cache_hits=%d failures=%d wall=%.3fs peak_rss=%d KiB",
                mode, urls.count, sent, result.receipts - sent, result.hits, result.failures, seconds, Self.peakRSSKiB() ?? -1))
            #expect(result.failures == 0)
            #expect(sent >= 100 && sent <= 1000)
        }
    }
}
