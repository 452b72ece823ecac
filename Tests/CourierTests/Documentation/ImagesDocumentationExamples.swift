import Courier
import CourierTestServer
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The examples of the "Images and Activity" article, run against the in-process test server
/// (its `/image/png` is a 16 × 12 PNG).
@Suite("Documentation: Images and Activity")
struct ImagesDocumentationExamples {
    @Test("download, merge, cancel one receipt, cache")
    func images() async throws {
        try await TestServer.withRunning { server in
            let downloader = ImageDownloader(maximumActiveDownloads: 4)        // or ImageDownloader.defaultInstance
            downloader.callbackQueue = DispatchQueue(label: "thumbnails")       // default .main, which nothing drains on Linux

            let request = URLRequest(url: server.baseURL.appending(path: "image/png"))
            let receipt = downloader.downloadImage(for: request, success: { request, response, image in
                print(image.format, image.pixelWidth, image.pixelHeight)       // png 16 12; response is nil for a cache hit
            }, failure: { request, response, error in
                print(error)                                                   // CourierError.cancelled after cancelTask(for:)
            })
            let same = downloader.downloadImage(for: request, success: nil, failure: nil)   // merged: same?.task === receipt?.task
            if let same { downloader.cancelTask(for: same) }                   // that receipt only; the download goes on

            let image = try await downloader.image(for: request)               // async; from the image cache now
            let cache = downloader.imageCache as? AutoPurgingImageCache
            print(cache?.memoryUsage ?? 0)                                      // 768 = 16 × 12 × 4

            #expect(same?.task === receipt?.task)
            try await eventually { receipt?.task.state == .completed }
            #expect(image.format == .png && image.pixelWidth == 16 && image.pixelHeight == 12)
            #expect(cache?.memoryUsage == 768)
            #expect(server.requestsReceived(forPath: "/image/png") == 1)
        }
    }

    @Test("the activity indicator")
    func activity() async throws {
        let indicator = NetworkActivityIndicatorManager(notificationCenter: NotificationCenter())   // or .shared
        indicator.isEnabled = true
        indicator.activationDelay = 0.05            // default 1.0 s: quick requests never show it
        indicator.completionDelay = 0.05            // default 0.17 s
        indicator.setNetworkingActivityActionWithBlock { visible in
            print("activity", visible)              // in an app: show or hide a spinner
        }
        indicator.incrementActivityCount()          // the session tasks' notifications count too
        // ... work that takes longer than the activation delay ...
        try await eventually { indicator.isNetworkActivityIndicatorVisible }
        indicator.decrementActivityCount()
        try await eventually { !indicator.isNetworkActivityIndicatorVisible }
    }
}
