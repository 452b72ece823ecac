public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization

/// What UIImageView+AFNetworking keeps per view, for any view that shows one image (a UIKit or
/// AppKit view, a terminal widget, a server-side thumbnail slot).
///
/// - A request without an http(s) URL shows the placeholder and fails with `.invalidURL`.
/// - A request for the URL already loading (with the same credential fields, see
///   ``ImageDownloader``) is a no-op; any other cancels the previous download.
/// - A hit in the downloader's image cache is applied at once, on the calling thread.
/// - Otherwise the placeholder (when given) is shown and the image applies when it arrives, only
///   if this download is still the active one.
/// - With a `success` block, the block is called instead of `display` (AFN: "the caller must set
///   the image"). `failure` is called only for the active download.
///
/// `display`, `success` and `failure` run on the downloader's `callbackQueue` for downloads (the
/// main queue by default, what a view wants), on the calling thread for the placeholder and cache
/// hits. Thread-safe.
public final class ImageLoadingBinding: Sendable {
    /// The downloader used (default ``ImageDownloader/defaultInstance``, AFN's
    /// `sharedImageDownloader`).
    public let downloader: ImageDownloader
    private let state = Mutex(ImageBindingState<ImageDownloadReceipt>())

    /// A binding downloading through `downloader`.
    public init(downloader: ImageDownloader = .defaultInstance) {
        self.downloader = downloader
    }

    /// The receipt of the download in flight for this view, if any.
    public var activeReceipt: ImageDownloadReceipt? { state.withLock { $0.active?.receipt } }

    /// `setImageWithURL:placeholderImage:`: loads `url` with `Accept: image/*`.
    public func setImage(with url: URL, placeholder: Image? = nil, display: @escaping @Sendable (Image?) -> Void) {
        var request = URLRequest(url: url)
        request.addValue("image/*", forHTTPHeaderField: "Accept")
        setImage(with: request, placeholder: placeholder, display: display, success: nil, failure: nil)
    }

    /// `setImageWithURLRequest:placeholderImage:success:failure:` (rules in the type's summary).
    /// - Parameters:
    ///   - request: the image request.
    ///   - placeholder: shown until the image arrives (nil: none).
    ///   - display: shows an image (nil: clear); the placeholder and, without `success`, the result.
    ///   - success: replaces `display` for the result: called with the request, the response (nil
    ///     for a cache hit) and the image.
    ///   - failure: called with the error of the active download.
    ///   - displaysNilPlaceholder: call `display(nil)` when a download starts even though
    ///     `placeholder` is nil (for a view whose placeholder is not an ``Image``, such as a
    ///     `UIImage`: it maps nil to its own placeholder). Default false.
    public func setImage(
        with request: URLRequest, placeholder: Image?, displaysNilPlaceholder: Bool = false,
        display: @escaping @Sendable (Image?) -> Void,
        success: (@Sendable (URLRequest, HTTPURLResponse?, Image) -> Void)?,
        failure: (@Sendable (URLRequest, HTTPURLResponse?, any Error) -> Void)?
    ) {
        let urlIdentifier = ImageDownloader.mergeKey(of: request)
        let start = state.withLock { $0.request(urlIdentifier: urlIdentifier) }
        switch start {
        case .sameURL:
            return
        case .badURL(let previous):
            if let previous { downloader.cancelTask(for: previous) }
            display(placeholder)
            let text = request.url?.absoluteString ?? "no URL"
            failure?(request, nil, CourierError.requestSerializationFailed(.invalidURL("an image needs an http(s) URL with a host: \(text)")))
        case .start(let id, let previous):
            if let previous { downloader.cancelTask(for: previous) }
            if ImageDownloader.looksUpImageCache(for: request.cachePolicy),
                let cached = downloader.imageCache?.image(for: request, withAdditionalIdentifier: nil)
            {
                _ = state.withLock { $0.finish(id) }
                if let success { success(request, nil, cached) } else { display(cached) }
                return
            }
            if placeholder != nil || displaysNilPlaceholder { display(placeholder) }
            let receipt = downloader.downloadImage(
                for: request,
                success: { [weak self] request, response, image in
                    guard let self, self.state.withLock({ $0.finish(id) }) else { return }
                    if let success { success(request, response, image) } else { display(image) }
                },
                failure: { [weak self] request, response, error in
                    guard let self, self.state.withLock({ $0.finish(id) }) else { return }
                    failure?(request, response, error)
                })
            if let receipt, !state.withLock({ $0.attach(receipt, to: id) }) {
                downloader.cancelTask(for: receipt)  // replaced while being started
            }
        }
    }

    /// `cancelImageDownloadTask`: cancels the active download (its failure block is not called,
    /// as the download is no longer the active one).
    public func cancelImageDownloadTask() {
        if let receipt = state.withLock({ $0.cancel() }) { downloader.cancelTask(for: receipt) }
    }
}

/// UIButton+AFNetworking's per-state images: one ``ImageLoadingBinding`` per key (a control
/// state, `image` vs `backgroundImage`), made on first use. Thread-safe.
public final class KeyedImageLoadingBindings<Key: Hashable & Sendable>: Sendable {
    /// The downloader every binding uses.
    public let downloader: ImageDownloader
    private let bindings = Mutex<[Key: ImageLoadingBinding]>([:])

    /// Bindings downloading through `downloader` (default ``ImageDownloader/defaultInstance``).
    public init(downloader: ImageDownloader = .defaultInstance) {
        self.downloader = downloader
    }

    /// The binding for `key`.
    public subscript(key: Key) -> ImageLoadingBinding {
        bindings.withLock { bindings in
            if let existing = bindings[key] { return existing }
            let made = ImageLoadingBinding(downloader: downloader)
            bindings[key] = made
            return made
        }
    }
}
