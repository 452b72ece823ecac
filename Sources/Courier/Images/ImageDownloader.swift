public import Dispatch
public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

/// AFNetworking's `AFImageDownloader`: downloads images with at most
/// ``maximumActiveDownloads`` at a time, merges identical requests into one task, and keeps the
/// results in an ``ImageRequestCache``.
///
/// - Requests for the same URL (its absolute string) while a download is queued or running share
///   that one task; each caller gets its own ``ImageDownloadReceipt`` and its own callbacks.
///   Not AFN: requests carrying `Authorization`, `Cookie`, `Proxy-Authorization` or a token
///   field (`X-Api-Key`, `X-Auth-Token`, `X-Amz-Security-Token`) share a task
///   (and a cached image, see ``ImageRequestCache/imageCacheKey(for:withAdditionalIdentifier:)``)
///   only with requests carrying the same values, so a downloader shared by several users never
///   gives one user's image to another.
/// - Before downloading, the image cache is asked when the request's cache policy is
///   `.useProtocolCachePolicy`, `.returnCacheDataElseLoad` or `.returnCacheDataDontLoad` (AFN's
///   list). A hit calls `success` with a nil response and returns no receipt.
/// - ``cancelTask(for:)`` calls that receipt's `failure` with ``CourierError/cancelled(url:)``; the
///   task itself is cancelled only when no receipt remains.
/// - A request without an `http`/`https` URL with a host calls `failure` with
///   ``CourierError/requestSerializationFailed(_:)`` (`.invalidURL`) and returns no receipt.
/// - Callbacks run on ``callbackQueue``: `DispatchQueue.main` by default as in AFN (an app's
///   choice). A server or command-line tool has no main run loop draining it: set a queue of its
///   own, or use ``image(for:)``.
///
/// Thread-safe: call it from any thread.
public final class ImageDownloader: Sendable {
    /// The order in which queued downloads start.
    public enum DownloadPrioritization: Sendable {
        /// First queued, first started (default).
        case fifo
        /// Last queued, first started (newest requests first, as for a scrolling list).
        case lifo
    }

    struct ResponseHandler: Sendable {
        var request: URLRequest
        var success: (@Sendable (URLRequest, HTTPURLResponse?, Image) -> Void)?
        var failure: (@Sendable (URLRequest, HTTPURLResponse?, any Error) -> Void)?
        /// nil: call directly, on whichever thread delivers (the async API's continuation).
        var queue: DispatchQueue?

        func succeed(_ response: HTTPURLResponse?, _ image: Image) {
            guard let success else { return }
            let request = request
            if let queue { queue.async { success(request, response, image) } } else { success(request, response, image) }
        }

        func fail(_ response: HTTPURLResponse?, _ error: any Error) {
            guard let failure else { return }
            let request = request
            if let queue { queue.async { failure(request, response, error) } } else { failure(request, response, error) }
        }
    }

    private typealias Queue = ImageDownloadQueue<DataTask, ResponseHandler>

    /// The shared downloader (AFN's `+defaultInstance`): ``defaultSessionManager()``, FIFO, four
    /// active downloads, a default ``AutoPurgingImageCache``.
    public static let defaultInstance = ImageDownloader()

    /// The manager that runs the downloads; its response serializer must produce ``Image``s.
    public let sessionManager: URLSessionManager
    /// The cache asked before downloading and filled after; nil for none.
    public let imageCache: (any ImageRequestCache)?
    /// The order queued downloads start in.
    public let downloadPrioritization: DownloadPrioritization
    /// How many downloads run at once (at least 1).
    public let maximumActiveDownloads: Int

    private let state: Mutex<Queue>
    private let callbackQueueStorage = Mutex(DispatchQueue.main)

    /// Where `success` and `failure` run. Default `DispatchQueue.main` (AFN). Read when a
    /// download is asked for: changing it does not move callbacks already promised.
    public var callbackQueue: DispatchQueue {
        get { callbackQueueStorage.withLock { $0 } }
        set { callbackQueueStorage.withLock { $0 = newValue } }
    }

    /// AFN's image session configuration: a 60 s request timeout and ``defaultHTTPCache``.
    public static func defaultSessionConfiguration() -> SessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.timeoutIntervalForRequest = 60
        configuration.cache = defaultHTTPCache
        return configuration
    }

    /// AFN's `defaultURLCache`: 20 MiB in memory, 150 MiB on disk in
    /// `<caches>/com.alamofire.imagedownloader` (`~/.cache` or `$XDG_CACHE_HOME` on Linux; the
    /// temporary directory when there is no caches directory). One instance, shared by every
    /// manager made from ``defaultSessionConfiguration()`` (a directory must have one `HTTPCache`).
    public static let defaultHTTPCache: HTTPCache = {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return HTTPCache(
            memoryCapacity: 20 * 1024 * 1024, diskCapacity: 150 * 1024 * 1024,
            directory: caches.appendingPathComponent("com.alamofire.imagedownloader", isDirectory: true))
    }()

    /// A manager with ``defaultSessionConfiguration()`` and an ``ImageResponseSerializer``.
    public static func defaultSessionManager() -> URLSessionManager {
        let manager = URLSessionManager(configuration: defaultSessionConfiguration())
        manager.responseSerializer = ImageResponseSerializer()
        return manager
    }

    /// Creates a downloader.
    /// - Parameters:
    ///   - sessionManager: runs the downloads (default: ``defaultSessionManager()``; its
    ///     response serializer must produce ``Image``).
    ///   - downloadPrioritization: FIFO (default) or LIFO.
    ///   - maximumActiveDownloads: downloads running at once (default 4; at least 1).
    ///   - imageCache: the cache (default a new ``AutoPurgingImageCache``; nil for none).
    public init(
        sessionManager: URLSessionManager = ImageDownloader.defaultSessionManager(),
        downloadPrioritization: DownloadPrioritization = .fifo, maximumActiveDownloads: Int = 4,
        imageCache: (any ImageRequestCache)? = AutoPurgingImageCache()
    ) {
        self.sessionManager = sessionManager
        self.imageCache = imageCache
        self.downloadPrioritization = downloadPrioritization
        self.maximumActiveDownloads = max(1, maximumActiveDownloads)
        self.state = Mutex(Queue(order: downloadPrioritization == .fifo ? .fifo : .lifo, maximumActive: maximumActiveDownloads))
    }

    /// Downloads running now (including cancelled ones whose connection is still closing).
    public var activeDownloadCount: Int { state.withLock { $0.activeCount } }
    /// Downloads waiting for a free slot.
    public var queuedDownloadCount: Int { state.withLock { $0.queuedCount } }

    /// Fetches the image for `request`: from the image cache, by joining a download of the same
    /// URL already queued or running, or by a new download (started now or queued).
    ///
    /// - Parameters:
    ///   - request: the request; its URL's absolute string identifies the image.
    ///   - receiptID: this caller's id (default a new one).
    ///   - success: called with the request, the response (nil for a cache hit) and the image.
    ///   - failure: called with the request, the response (if any) and the error:
    ///     ``CourierError/cancelled(url:)`` after ``cancelTask(for:)``, `.invalidURL` for a bad URL,
    ///     or the task's error.
    /// - Returns: the receipt, or nil for a cache hit or a bad URL (the callback is still called).
    @discardableResult
    public func downloadImage(
        for request: URLRequest, withReceiptID receiptID: UUID = UUID(),
        success: (@Sendable (URLRequest, HTTPURLResponse?, Image) -> Void)?,
        failure: (@Sendable (URLRequest, HTTPURLResponse?, any Error) -> Void)?
    ) -> ImageDownloadReceipt? {
        let handler = ResponseHandler(request: request, success: success, failure: failure, queue: callbackQueue)
        return download(request, receiptID: receiptID, handler: handler)
    }

    /// Removes the receipt's callbacks and calls its `failure` with ``CourierError/cancelled(url:)``
    /// (response nil). The task is cancelled when no other receipt shares it. A receipt already
    /// finished or cancelled is ignored.
    public func cancelTask(for receipt: ImageDownloadReceipt) {
        let url = receipt.task.originalRequest?.url
        let key = receipt.task.originalRequest.flatMap(Self.mergeKey(of:)) ?? ""
        let outcome = state.withLock { $0.cancel(receiptID: receipt.receiptID, urlIdentifier: key) }
        outcome.handler?.fail(nil, CourierError.cancelled(url: url))
        outcome.jobToCancel?.cancel()
    }

    /// The image for `request`, through the cache, merging and queue of
    /// ``downloadImage(for:withReceiptID:success:failure:)``; does not use ``callbackQueue``.
    /// Cancelling the Swift task cancels this caller's receipt.
    /// - Throws: what `failure` would get (``CourierError/cancelled(url:)`` when cancelled).
    public func image(for request: URLRequest) async throws -> Image {
        let receipt = Mutex<(receipt: ImageDownloadReceipt?, cancelled: Bool)>((nil, false))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Image, any Error>) in
                let handler = ResponseHandler(
                    request: request, success: { _, _, image in continuation.resume(returning: image) },
                    failure: { _, _, error in continuation.resume(throwing: error) }, queue: nil)
                let made = download(request, receiptID: UUID(), handler: handler)
                let cancelled = receipt.withLock { state in
                    state.receipt = made
                    return state.cancelled
                }
                if cancelled, let made { cancelTask(for: made) }
            }
        } onCancel: {
            let made = receipt.withLock { state in
                state.cancelled = true
                return state.receipt
            }
            if let made { cancelTask(for: made) }
        }
    }

    // MARK: - Internals

    private enum Admission {
        case cacheHit(Image)
        case task(Queue.AddOutcome)
    }

    /// Whether AFN asks the image cache for a request with this policy.
    static func looksUpImageCache(for policy: URLRequest.CachePolicy) -> Bool {
        switch policy {
        case .useProtocolCachePolicy, .returnCacheDataElseLoad, .returnCacheDataDontLoad: return true
        default: return false
        }
    }

    /// What identifies the download of a request the downloader can fetch (requests with the same
    /// key share one task): the URL's absolute string followed by the request's
    /// ``ImageCredentialScope`` suffix (empty without credentials). Nil when the request can't be
    /// fetched (no URL, not http(s), no host).
    static func mergeKey(of request: URLRequest) -> String? {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { return nil }
        return url.absoluteString + ImageCredentialScope.keySuffix(for: request)
    }

    private func download(_ request: URLRequest, receiptID: UUID, handler: ResponseHandler) -> ImageDownloadReceipt? {
        guard let urlIdentifier = Self.mergeKey(of: request) else {
            let text = request.url?.absoluteString ?? "no URL"
            handler.fail(nil, CourierError.requestSerializationFailed(.invalidURL("an image needs an http(s) URL with a host: \(text)")))
            return nil
        }
        let admission: Admission = state.withLock { queue in
            if queue.merged[urlIdentifier] == nil, Self.looksUpImageCache(for: request.cachePolicy),
                let image = imageCache?.image(for: request, withAdditionalIdentifier: nil)
            {
                return .cacheHit(image)
            }
            return .task(
                queue.add(urlIdentifier: urlIdentifier, receiptID: receiptID, handler: handler) { taskID in
                    sessionManager.dataTask(with: request, completionHandler: { response, object, error in
                        self.finish(taskID: taskID, urlIdentifier: urlIdentifier, request: request, response: response, object: object, error: error)
                    })
                })
        }
        switch admission {
        case .cacheHit(let image):
            handler.succeed(nil, image)
            return nil
        case .task(.merged(let task)), .task(.queued(let task)):
            return ImageDownloadReceipt(receiptID: receiptID, task: task)
        case .task(.start(let task)):
            task.resume()
            return ImageDownloadReceipt(receiptID: receiptID, task: task)
        }
    }

    private func finish(
        taskID: UUID, urlIdentifier: String, request: URLRequest, response: HTTPURLResponse?, object: (any Sendable)?,
        error: (any Error)?
    ) {
        let image = object.flatMap { $0 as? Image }
        let outcome = state.withLock { queue in
            if error == nil, let image, queue.merged[urlIdentifier]?.id == taskID, let imageCache,
                imageCache.shouldCache(image, for: request, withAdditionalIdentifier: nil)
            {
                imageCache.add(image, for: request, withAdditionalIdentifier: nil)
            }
            return queue.complete(taskID: taskID, urlIdentifier: urlIdentifier)
        }
        for handler in outcome.handlers {
            if let error {
                handler.fail(response, error)
            } else if let image {
                handler.succeed(response, image)
            } else {
                handler.fail(
                    response,
                    CourierError.responseSerializationFailed(
                        reason: "the response has no image data", response: response, data: nil, underlying: nil))
            }
        }
        for task in outcome.jobsToStart { task.resume() }
    }
}
