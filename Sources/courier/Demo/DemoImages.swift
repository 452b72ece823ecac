import Courier
import CourierTestServer
import Dispatch
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The demo's image step: a page of thumbnails (duplicates included) through `ImageDownloader`,
/// showing merged requests, the four-download limit, image-cache hits and the activity
/// indicator's transitions. Deterministic: the session's completion queue is held until the whole
/// page is asked for (so every duplicate meets its download in flight), and the activity
/// manager runs on a clock the demo moves by hand.
struct DemoImages: Sendable {
    static let stepTitle = "A page of images through ImageDownloader: merged duplicates, cache hits, the activity indicator"

    let servers: DemoServers
    let output: DemoOutput

    /// The page: 12 thumbnails, 8 distinct URLs.
    static let page = [
        "/image/png?id=1", "/image/jpeg?id=1", "/image/png?id=2", "/image/png?id=1", "/image/gif?id=1", "/image/png?id=3",
        "/image/jpeg?id=1", "/image/webp?id=1", "/image/png?id=4", "/image/jpeg?id=2", "/image/png?id=2", "/image/png?id=1",
    ]

    func run() async throws {
        let server = servers.http
        let port = server.port
        // The image defaults, with the HTTP cache in memory only (the demo leaves no files behind).
        var configuration = SessionConfiguration()
        configuration.timeoutIntervalForRequest = 60
        configuration.cache = HTTPCache(memoryCapacity: 20 << 20, diskCapacity: 0, directory: nil)
        let manager = URLSessionManager(configuration: configuration)
        manager.responseSerializer = ImageResponseSerializer()
        let completions = DispatchQueue(label: "courier.demo.images.completion")
        manager.completionQueue = completions
        let downloader = ImageDownloader(sessionManager: manager, imageCache: AutoPurgingImageCache(purgesOnMemoryPressure: false))
        downloader.callbackQueue = DispatchQueue(label: "courier.demo.images.callbacks")

        let clock = DemoClock()
        let activity = NetworkActivityIndicatorManager(notificationCenter: .default, clock: clock)
        activity.isEnabled = true
        activity.taskFilter = { $0.originalRequest?.url?.port == port }
        let transitions = Mutex<[Bool]>([])
        activity.setNetworkingActivityActionWithBlock { visible in transitions.withLock { $0.append(visible) } }

        let urls = try Self.page.map { path -> URL in
            guard let url = URL(string: server.baseURL.absoluteString + path) else { throw DemoFailure("bad demo URL \(path)") }
            return url
        }
        let distinct = Set(urls).count
        output.detail("page: \(urls.count) image requests, \(distinct) distinct URLs, at most \(downloader.maximumActiveDownloads) downloads at once")

        // 1. The page, with completions held until every request is in.
        completions.suspend()
        let first = try await fetch(urls, with: downloader) { receipts in
            let tasks = Set(receipts.compactMap { $0?.task })
            output.detail("\(receipts.compactMap { $0 }.count) receipts share \(tasks.count) tasks; \(downloader.queuedDownloadCount) waiting for a free slot")
            clock.advance(by: activity.activationDelay)
            completions.resume()
        }
        let sent = Self.imageRequests(server)
        try DemoSteps.check(sent == distinct, "\(sent) requests reached the server, expected \(distinct)")
        output.ok("\(sent) downloads reached the server for \(urls.count) requests: \(urls.count - sent) merged into a download already queued or running")
        let formats = Dictionary(grouping: first.compactMap { $0.image }, by: \.format.rawValue).mapValues(\.count)
        let summary = ["png", "jpeg", "gif", "webp"].map { "\(formats[$0] ?? 0) \($0)" }.joined(separator: ", ")
        try DemoSteps.check(first.allSatisfy { $0.image?.pixelWidth == 16 && $0.image?.pixelHeight == 12 }, "an image is not 16×12")
        output.ok("every image's size read from its header: \(summary), all 16×12")

        // 2. The page again: all from the image cache.
        let again = try await fetch(urls, with: downloader) { _ in }
        let hits = again.filter { $0.receipt == nil && $0.response == nil && $0.image != nil }.count
        try DemoSteps.check(hits == urls.count, "\(hits) cache hits, expected \(urls.count)")
        try DemoSteps.check(Self.imageRequests(server) == sent, "the second page reached the server")
        output.ok("the page again: \(hits) image-cache hits (success with no response and no receipt), 0 new requests")

        // 3. The activity indicator: one "on" for the whole overlapping page, one "off".
        try await waitUntil { activity.activityCount == 0 }
        clock.advance(by: activity.completionDelay)
        try await waitUntil { transitions.withLock { $0.count } == 2 }
        let seen = transitions.withLock { $0 }.map { $0 ? "on" : "off" }.joined(separator: ", ")
        try DemoSteps.check(seen == "on, off", "the indicator went \(seen)")
        output.ok(
            "activity indicator: \(seen) (on after the \(activity.activationDelay) s activation delay, off \(activity.completionDelay) s after the last request)")
    }

    struct Outcome: Sendable {
        var receipt: ImageDownloadReceipt?
        var response: HTTPURLResponse?
        var image: Image?
    }

    /// Asks for every URL, calls `whileInFlight` with the receipts, then waits for every callback.
    private func fetch(
        _ urls: [URL], with downloader: ImageDownloader, whileInFlight: ([ImageDownloadReceipt?]) -> Void
    ) async throws -> [Outcome] {
        let results = Mutex<[Int: Outcome]>([:])
        var receipts: [ImageDownloadReceipt?] = []
        for (index, url) in urls.enumerated() {
            let receipt = downloader.downloadImage(
                for: URLRequest(url: url),
                success: { _, response, image in results.withLock { $0[index] = Outcome(response: response, image: image) } },
                failure: { _, _, error in
                    results.withLock { $0[index] = Outcome() }
                    output.failure("\(url.path): \(DemoSteps.userFacing(error))")
                })
            receipts.append(receipt)
        }
        whileInFlight(receipts)
        try await waitUntil { results.withLock { $0.count } == urls.count }
        return results.withLock { results in
            urls.indices.map { index in
                var outcome = results[index] ?? Outcome()
                outcome.receipt = receipts[index]
                return outcome
            }
        }
    }

    private static func imageRequests(_ server: TestServer) -> Int {
        ["/image/png", "/image/jpeg", "/image/gif", "/image/webp"].reduce(0) { $0 + server.requestsReceived(forPath: $1) }
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(30)
        while !condition() {
            guard Date() < deadline else { throw DemoFailure("gave up waiting after 30 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// The activity manager's clock in the demo: time moves only when the demo says so, so the
/// transitions print the same on every run.
final class DemoClock: NetworkActivityClock {
    private let state = Mutex<(now: Double, pending: [(deadline: Double, action: @Sendable () -> Void)])>((0, []))

    var now: Double { state.withLock { $0.now } }

    func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.pending.append((deadline, action)) }
    }

    func advance(by seconds: Double) {
        let due = state.withLock { state in
            state.now += seconds
            let now = state.now
            defer { state.pending.removeAll { $0.deadline <= now } }
            return state.pending.filter { $0.deadline <= now }
        }
        for wake in due { wake.action() }
    }
}
