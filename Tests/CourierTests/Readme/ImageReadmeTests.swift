import Courier
import CourierTestServer
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Image downloads with merging, per-receipt cancellation and the image cache, on a manager
/// without an HTTP cache, against the test server (the article's version is
/// `ImagesDocumentationExamples`).
@Suite struct ImageReadmeTests {
    @Test func readmeImagesExample() async throws {
        try await TestServer.withRunning { server in
            var configuration = ImageDownloader.defaultSessionConfiguration()
            configuration.cache = nil  // the default has a disk cache; a test keeps its counts its own
            let manager = URLSessionManager(configuration: configuration)
            manager.responseSerializer = ImageResponseSerializer()
            let downloader = ImageDownloader(
                sessionManager: manager, maximumActiveDownloads: 4, imageCache: AutoPurgingImageCache(purgesOnMemoryPressure: false))
            downloader.callbackQueue = DispatchQueue(label: "thumbnails")

            let request = URLRequest(url: server.sessionURL("/image/png"))
            let printed = ImageCallbackRecorder()
            let receipt = downloader.downloadImage(for: request, success: printed.success("first"), failure: printed.failure("first"))
            let same = downloader.downloadImage(for: request, success: nil, failure: printed.failure("same"))
            #expect(same?.task === receipt?.task)
            if let same { downloader.cancelTask(for: same) }
            try await eventually { printed.events.count == 2 }
            #expect(printed.succeeded("first") && printed.isCancelled("same"))

            let image = try await downloader.image(for: request)
            #expect(image.format == .png && image.pixelWidth == 16 && image.pixelHeight == 12)
            let cache = downloader.imageCache as? AutoPurgingImageCache
            #expect(cache?.memoryUsage == 768)
            #expect(server.requestsReceived(forPath: "/image/png") == 1)

            let indicator = NetworkActivityIndicatorManager(notificationCenter: NotificationCenter())
            indicator.isEnabled = true
            indicator.setNetworkingActivityActionWithBlock { _ in }
            #expect(indicator.activationDelay == 1.0 && indicator.completionDelay == 0.17)
        }
    }
}
