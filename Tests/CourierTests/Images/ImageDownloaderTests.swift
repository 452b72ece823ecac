import Courier
import CourierTestServer
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// What an ImageDownloader's callbacks delivered, in order.
final class ImageCallbackRecorder: Sendable {
    enum Event: Sendable {
        case success(tag: String, response: HTTPURLResponse?, image: Image)
        case failure(tag: String, response: HTTPURLResponse?, error: any Error)

        var tag: String {
            switch self {
            case .success(let tag, _, _), .failure(let tag, _, _): return tag
            }
        }
    }

    private let storage = Mutex<[Event]>([])
    var events: [Event] { storage.withLock { $0 } }
    var tags: [String] { events.map(\.tag) }

    func success(_ tag: String) -> @Sendable (URLRequest, HTTPURLResponse?, Image) -> Void {
        { _, response, image in self.storage.withLock { $0.append(.success(tag: tag, response: response, image: image)) } }
    }

    func failure(_ tag: String) -> @Sendable (URLRequest, HTTPURLResponse?, any Error) -> Void {
        { _, response, error in self.storage.withLock { $0.append(.failure(tag: tag, response: response, error: error)) } }
    }

    func event(_ tag: String) -> Event? { events.first { $0.tag == tag } }

    func isCancelled(_ tag: String) -> Bool {
        guard case .failure(_, _, let error) = event(tag), case CourierError.cancelled = error else { return false }
        return true
    }

    func succeeded(_ tag: String) -> Bool {
        guard case .success = event(tag) else { return false }
        return true
    }
}

/// AFImageDownloaderTests against the test server's `/image/*` endpoints; `/fault/no-response`
/// (reads the request, never answers) holds a download slot until its receipt is cancelled.
@Suite struct ImageDownloaderTests {
    let recorder = ImageCallbackRecorder()

    /// A downloader on its own manager (no HTTP cache: each test counts what reaches its server)
    /// and image cache, with callbacks on a serial queue of its own (nothing drains the main
    /// queue in a test process).
    static func makeDownloader(
        _ order: ImageDownloader.DownloadPrioritization = .fifo, maximumActiveDownloads: Int = 4
    ) -> ImageDownloader {
        var configuration = ImageDownloader.defaultSessionConfiguration()
        configuration.cache = nil
        let manager = URLSessionManager(configuration: configuration)
        manager.responseSerializer = ImageResponseSerializer()
        let downloader = ImageDownloader(
            sessionManager: manager, downloadPrioritization: order,
            maximumActiveDownloads: maximumActiveDownloads, imageCache: AutoPurgingImageCache(purgesOnMemoryPressure: false))
        downloader.callbackQueue = DispatchQueue(label: "image-downloader-tests.callbacks")
        return downloader
    }

    func download(_ downloader: ImageDownloader, _ url: URL, tag: String, policy: URLRequest.CachePolicy = .useProtocolCachePolicy)
        -> ImageDownloadReceipt?
    {
        var request = URLRequest(url: url)
        request.cachePolicy = policy
        return downloader.downloadImage(for: request, success: recorder.success(tag), failure: recorder.failure(tag))
    }

    @Test func defaultsAreAFNs() {
        let downloader = ImageDownloader.defaultInstance
        #expect(downloader.maximumActiveDownloads == 4)
        #expect(downloader.downloadPrioritization == .fifo)
        #expect(downloader.callbackQueue.label == DispatchQueue.main.label)
        #expect(downloader.sessionManager.configuration.timeoutIntervalForRequest == 60)
        let cache = downloader.sessionManager.configuration.cache
        #expect(cache === ImageDownloader.defaultHTTPCache)
        #expect(cache?.memoryCapacity == 20 * 1024 * 1024)
        #expect(cache?.diskCapacity == 150 * 1024 * 1024)
        #expect(cache?.directory?.lastPathComponent == "com.alamofire.imagedownloader")
        #expect(downloader.sessionManager.responseSerializer is ImageResponseSerializer)
        #expect(downloader.imageCache is AutoPurgingImageCache)
    }

    @Test func downloadsThenServesFromTheImageCache() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader()
            let url = server.sessionURL("/image/png")
            let receipt = try #require(download(downloader, url, tag: "first"))
            #expect(receipt.task.originalRequest?.url == url)
            try await eventually { recorder.events.count == 1 }
            guard case .success(_, let response, let image) = recorder.event("first") else {
                Issue.record("no success: \(recorder.events)")
                return
            }
            #expect(response?.statusCode == 200)
            #expect(image.format == .png && image.pixelWidth == 16 && image.pixelHeight == 12)
            #expect(downloader.imageCache?.image(for: URLRequest(url: url), withAdditionalIdentifier: nil) == image)

            // A hit: success with a nil response, no receipt, nothing sent.
            #expect(download(downloader, url, tag: "hit") == nil)
            try await eventually { recorder.events.count == 2 }
            guard case .success(_, let hitResponse, let hitImage) = recorder.event("hit") else {
                Issue.record("no hit: \(recorder.events)")
                return
            }
            #expect(hitResponse == nil && hitImage == image)
            #expect(server.requestsReceived(forPath: "/image/png") == 1)

            // Policies AFN doesn't look the cache up for go to the network.
            #expect(download(downloader, url, tag: "reload", policy: .reloadIgnoringLocalCacheData) != nil)
            try await eventually { recorder.events.count == 3 }
            #expect(recorder.succeeded("reload"))
            #expect(server.requestsReceived(forPath: "/image/png") == 2)
        }
    }

    @Test func identicalRequestsShareOneTaskAndEachHandlerIsCalled() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader(maximumActiveDownloads: 1)
            let blocker = try #require(download(downloader, server.sessionURL("/fault/no-response"), tag: "blocker"))
            let url = server.sessionURL("/image/gif")
            let first = try #require(download(downloader, url, tag: "a"))
            let second = try #require(download(downloader, url, tag: "b"))
            #expect(first.task === second.task && first.receiptID != second.receiptID)
            #expect(downloader.queuedDownloadCount == 1)
            downloader.cancelTask(for: blocker)
            try await eventually { recorder.events.count == 3 }
            #expect(recorder.isCancelled("blocker"))
            #expect(recorder.succeeded("a") && recorder.succeeded("b"))
            #expect(server.requestsReceived(forPath: "/image/gif") == 1)
        }
    }

    @Test func cancellingOneOfTwoMergedHandlersLeavesTheTaskRunning() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader()
            let url = server.sessionURL("/fault/no-response")
            let first = try #require(download(downloader, url, tag: "first"))
            let second = try #require(download(downloader, url, tag: "second"))
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 1 }
            downloader.cancelTask(for: first)
            try await eventually { recorder.events.count == 1 }
            #expect(recorder.isCancelled("first"))
            guard case .failure(_, let response, _) = recorder.event("first") else { return }
            #expect(response == nil)
            #expect(second.task.state == .running)
            downloader.cancelTask(for: first)  // again: ignored
            downloader.cancelTask(for: second)
            try await eventually { recorder.events.count == 2 && second.task.state == .completed }
            #expect(recorder.isCancelled("second"))
            try await eventually { downloader.activeDownloadCount == 0 }
            #expect(recorder.events.count == 2)
        }
    }

    @Test func aFifthDownloadWaitsUntilOneOfFourFinishes() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader()
            var stalled: [ImageDownloadReceipt] = []
            for index in 1...4 {
                stalled.append(try #require(download(downloader, server.sessionURL("/fault/no-response?i=\(index)"), tag: "stall-\(index)")))
            }
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 4 }
            let fifth = try #require(download(downloader, server.sessionURL("/image/png"), tag: "fifth"))
            #expect(downloader.activeDownloadCount == 4 && downloader.queuedDownloadCount == 1)
            #expect(fifth.task.state == .suspended)
            #expect(server.requestsReceived(forPath: "/image/png") == 0)
            downloader.cancelTask(for: stalled[2])
            try await eventually { recorder.succeeded("fifth") }
            #expect(server.requestsReceived(forPath: "/image/png") == 1)
            #expect(downloader.queuedDownloadCount == 0)
            for receipt in stalled { downloader.cancelTask(for: receipt) }
            try await eventually { downloader.activeDownloadCount == 0 }
        }
    }

    @Test(arguments: [(ImageDownloader.DownloadPrioritization.fifo, ["1", "2", "3"]), (.lifo, ["3", "2", "1"])])
    func queuedDownloadsStartInPrioritizationOrder(order: ImageDownloader.DownloadPrioritization, expected: [String]) async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader(order, maximumActiveDownloads: 1)
            let blocker = try #require(download(downloader, server.sessionURL("/fault/no-response"), tag: "blocker"))
            for index in 1...3 { _ = download(downloader, server.sessionURL("/image/png?n=\(index)"), tag: "\(index)") }
            #expect(downloader.queuedDownloadCount == 3)
            downloader.cancelTask(for: blocker)
            try await eventually { recorder.events.count == 4 }
            // One at a time: each finishes before the next starts, so callbacks come in start order.
            #expect(Array(recorder.tags.dropFirst()) == expected)
        }
    }

    @Test func aBadURLFailsClearlyWithoutAReceipt() async throws {
        let downloader = Self.makeDownloader()
        for (index, string) in ["ftp://example.com/a.png", "/relative/a.png", "http:///nohost.png"].enumerated() {
            let url = try #require(URL(string: string))
            #expect(download(downloader, url, tag: "bad-\(index)") == nil)
        }
        var noURL = URLRequest(url: URL(fileURLWithPath: "/"))
        noURL.url = nil
        #expect(downloader.downloadImage(for: noURL, success: recorder.success("nil"), failure: recorder.failure("nil")) == nil)
        try await eventually { recorder.events.count == 4 }
        for event in recorder.events {
            guard case .failure(_, nil, CourierError.requestSerializationFailed(.invalidURL(let text))) = event else {
                Issue.record("expected invalidURL, got \(event)")
                continue
            }
            #expect(text.contains("http(s) URL"))
        }
        #expect(downloader.activeDownloadCount == 0)
    }

    @Test func aFailedDownloadReachesEveryHandlerAndCachesNothing() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader()
            let url = server.sessionURL("/status/404")
            _ = download(downloader, url, tag: "a")
            _ = download(downloader, url, tag: "b")
            try await eventually { recorder.events.count == 2 }
            for tag in ["a", "b"] {
                guard case .failure(_, let response, CourierError.unacceptableStatusCode) = recorder.event(tag) else {
                    Issue.record("\(tag): \(String(describing: recorder.event(tag)))")
                    continue
                }
                #expect(response?.statusCode == 404)
            }
            #expect((downloader.imageCache as? AutoPurgingImageCache)?.memoryUsage == 0)
        }
    }

    @Test func asyncImageReturnsTheImageAndCancellationCancelsTheReceipt() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader()
            let image = try await downloader.image(for: URLRequest(url: server.sessionURL("/image/webp")))
            #expect(image.format == .webp)
            let cached = try await downloader.image(for: URLRequest(url: server.sessionURL("/image/webp")))
            #expect(cached == image && server.requestsReceived(forPath: "/image/webp") == 1)

            let stalled = Task { try await downloader.image(for: URLRequest(url: server.sessionURL("/fault/no-response"))) }
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 1 }
            stalled.cancel()
            await #expect(throws: CourierError.self) { try await stalled.value }
            try await eventually { downloader.activeDownloadCount == 0 }
        }
    }
    @Test func aRefusingCacheIsAskedAndNothingIsStored() async throws {
        try await TestServer.withRunning { server in
            let cache = RefusingImageCache()
            var configuration = ImageDownloader.defaultSessionConfiguration()
            configuration.cache = nil
            let manager = URLSessionManager(configuration: configuration)
            manager.responseSerializer = ImageResponseSerializer()
            let downloader = ImageDownloader(sessionManager: manager, imageCache: cache)
            downloader.callbackQueue = DispatchQueue(label: "refusing")
            let url = server.sessionURL("/image/png")
            _ = download(downloader, url, tag: "first")
            try await eventually { recorder.events.count == 1 }
            _ = download(downloader, url, tag: "second")
            try await eventually { recorder.events.count == 2 }
            #expect(recorder.succeeded("first") && recorder.succeeded("second"))
            #expect(cache.asked.withLock { $0 } == 2)
            #expect(server.requestsReceived(forPath: "/image/png") == 2)
        }
    }

    @Test func downloadCancelAndDownloadAgain() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader()
            let urls = (1...5).map { server.sessionURL("/image/jpeg?n=\($0)") }
            for (index, url) in urls.enumerated() {
                let receipt = try #require(download(downloader, url, tag: "cancelled-\(index)"))
                downloader.cancelTask(for: receipt)
            }
            for (index, url) in urls.enumerated() { _ = download(downloader, url, tag: "again-\(index)") }
            try await eventually { recorder.events.count == 10 }
            for index in urls.indices {
                #expect(recorder.isCancelled("cancelled-\(index)"))
                #expect(recorder.succeeded("again-\(index)"))
            }
            try await eventually { downloader.activeDownloadCount == 0 }
        }
    }

    @Test func receiptIDIsTheOneGivenAndCallbacksRunOnTheCallbackQueue() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader()
            let key = DispatchSpecificKey<String>()
            downloader.callbackQueue.setSpecific(key: key, value: "callbacks")
            let onQueue = Mutex<[String?]>([])
            let id = UUID()
            let receipt = downloader.downloadImage(
                for: URLRequest(url: server.sessionURL("/image/png")), withReceiptID: id,
                success: { _, _, _ in onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key)) } },
                failure: nil)
            #expect(receipt?.receiptID == id)
            _ = downloader.downloadImage(
                for: URLRequest(url: server.sessionURL("/status/404")), success: nil,
                failure: { _, _, _ in onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key)) } })
            try await eventually { onQueue.withLock { $0.count } == 2 }
            #expect(onQueue.withLock { $0 } == ["callbacks", "callbacks"])
        }
    }

    @Test func anImageBehindARedirectIsDownloaded() async throws {
        try await TestServer.withRunning { server in
            let downloader = Self.makeDownloader()
            _ = download(downloader, server.sessionURL("/redirect-to?url=/image/gif"), tag: "redirected")
            try await eventually { recorder.events.count == 1 }
            guard case .success(_, let response, let image) = recorder.event("redirected") else {
                Issue.record("\(recorder.events)")
                return
            }
            #expect(response?.url?.path == "/image/gif" && image.format == .gif)
        }
    }
}

/// An image cache that is asked and refuses (AFN's testThatImageCacheIsPromptedShouldCacheNot).
final class RefusingImageCache: ImageRequestCache {
    let base = AutoPurgingImageCache(purgesOnMemoryPressure: false)
    let asked = Mutex(0)
    func add(_ image: Image, withIdentifier identifier: String) { base.add(image, withIdentifier: identifier) }
    func removeImage(withIdentifier identifier: String) -> Bool { base.removeImage(withIdentifier: identifier) }
    func removeAllImages() -> Bool { base.removeAllImages() }
    func image(withIdentifier identifier: String) -> Image? { base.image(withIdentifier: identifier) }
    func add(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) {
        base.add(image, for: request, withAdditionalIdentifier: identifier)
    }
    func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        base.removeImage(for: request, withAdditionalIdentifier: identifier)
    }
    func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Image? {
        base.image(for: request, withAdditionalIdentifier: identifier)
    }
    func shouldCache(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        asked.withLock { $0 += 1 }
        return false
    }
}
