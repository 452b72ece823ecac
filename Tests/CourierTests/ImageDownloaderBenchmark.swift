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
    static let enabled = ProcessInfo.processInfo.environment["COURIER_IMAGE_BENCH"] != nil

    /// `VmHWM` (peak resident set) of this process, in KiB, from /proc/self/status.
    static func peakRSSKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    @Test(.enabled(if: enabled), arguments: [true, false])
    func thousandRequestsOverAHundredURLs(withImageCache: Bool) async throws {
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
                imageCache: withImageCache ? AutoPurgingImageCache(purgesOnMemoryPressure: false) : nil)
            downloader.callbackQueue = DispatchQueue(label: "bench.callbacks")
            // Request i asks for URL (i * 37) % 100: every URL ten times, spread over the run.
            let urls = (0..<1000).map { server.sessionURL("/image/png?id=\(($0 * 37) % 100)") }
            let done = Mutex((successes: 0, failures: 0, receipts: 0, hits: 0))
            let start = DispatchTime.now()
            for url in urls {
                let receipt = downloader.downloadImage(
                    for: URLRequest(url: url),
                    success: { _, response, _ in done.withLock { $0.successes += 1; if response == nil { $0.hits += 1 } } },
                    failure: { _, _, _ in done.withLock { $0.failures += 1 } })
                if receipt != nil { done.withLock { $0.receipts += 1 } }
            }
            try await eventually(within: 300) { done.withLock { $0.successes + $0.failures } == urls.count }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            let result = done.withLock { $0 }
            let sent = server.requestsReceived(forPath: "/image/png")
            print(String(
                format: "image-bench cache=%@ requests=%d server_requests=%d cache_hits=%d merged=%d failures=%d wall=%.3fs peak_rss=%d KiB",
                withImageCache ? "on" : "off", urls.count, sent, result.hits, result.receipts - sent, result.failures, seconds,
                Self.peakRSSKiB() ?? -1))
            #expect(result.failures == 0)
            #expect(sent >= 100 && sent <= 1000)
            if withImageCache { #expect(sent == 100) }
        }
    }
}
