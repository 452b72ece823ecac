// UIImageView/UIButton/UIActivityIndicatorView/UIRefreshControl/UIProgressView+AFNetworking as
// thin extensions over the platform-neutral bindings (ImageLoadingBinding, TaskRunningStateBinding,
// TaskProgressBinding), which hold the rules and are tested on every platform.
#if canImport(UIKit) && !os(watchOS)
public import Foundation
public import UIKit
import ObjectiveC

nonisolated(unsafe) private var imageBindingKey: UInt8 = 0
nonisolated(unsafe) private var buttonBindingsKey: UInt8 = 0
nonisolated(unsafe) private var runningBindingKey: UInt8 = 0
nonisolated(unsafe) private var progressBindingKey: UInt8 = 0

/// Runs `body` on the main actor: at once when already on the main thread (a cache hit applies
/// before the call returns, as in AFN), else on the next turn of the main queue.
private func onMain(_ body: @escaping @MainActor @Sendable () -> Void) {
    if Thread.isMainThread { MainActor.assumeIsolated(body) } else { DispatchQueue.main.async(execute: body) }
}

@MainActor
private func associated<T: AnyObject>(_ object: AnyObject, _ key: UnsafeRawPointer, make: () -> T) -> T {
    if let existing = objc_getAssociatedObject(object, key) as? T { return existing }
    let made = make()
    objc_setAssociatedObject(object, key, made, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)
    return made
}

extension UIImageView {
    /// This view's binding (made on first use, downloading through ``ImageDownloader/defaultInstance``).
    public var courierImageBinding: ImageLoadingBinding {
        associated(self, &imageBindingKey) { ImageLoadingBinding() }
    }

    /// `setImageWithURL:placeholderImage:`: loads `url` with `Accept: image/*`.
    public func setImage(with url: URL, placeholderImage: UIImage? = nil) {
        var request = URLRequest(url: url)
        request.addValue("image/*", forHTTPHeaderField: "Accept")
        setImage(with: request, placeholderImage: placeholderImage, success: nil, failure: nil)
    }

    /// `setImageWithURLRequest:placeholderImage:success:failure:` (rules: ``ImageLoadingBinding``).
    public func setImage(
        with request: URLRequest, placeholderImage: UIImage?,
        success: (@Sendable (URLRequest, HTTPURLResponse?, Image) -> Void)?,
        failure: (@Sendable (URLRequest, HTTPURLResponse?, any Error) -> Void)?
    ) {
        courierImageBinding.setImage(
            with: request, placeholder: nil, displaysNilPlaceholder: placeholderImage != nil,
            display: { [weak self] image in
                guard let view = self else { return }
                let decoded = image?.platformImage
                onMain { view.image = decoded ?? placeholderImage }
            }, success: success, failure: failure)
    }

    /// `cancelImageDownloadTask`.
    public func cancelImageDownloadTask() { courierImageBinding.cancelImageDownloadTask() }
}

extension UIButton {
    /// Per-state bindings: `(state.rawValue, false)` for the image, `(…, true)` for the background.
    public var courierImageBindings: KeyedImageLoadingBindings<ButtonImageSlot> {
        associated(self, &buttonBindingsKey) { KeyedImageLoadingBindings<ButtonImageSlot>() }
    }

    /// `setImageForState:withURL:placeholderImage:` (one state at a time; compound states unsupported, as in AFN).
    public func setImage(for state: UIControl.State, with url: URL, placeholderImage: UIImage? = nil) {
        loadImage(url, slot: ButtonImageSlot(state: state.rawValue, background: false), placeholderImage: placeholderImage) { button, image in
            button.setImage(image, for: state)
        }
    }

    /// `setBackgroundImageForState:withURL:placeholderImage:`.
    public func setBackgroundImage(for state: UIControl.State, with url: URL, placeholderImage: UIImage? = nil) {
        loadImage(url, slot: ButtonImageSlot(state: state.rawValue, background: true), placeholderImage: placeholderImage) { button, image in
            button.setBackgroundImage(image, for: state)
        }
    }

    /// `cancelImageDownloadTaskForState:`.
    public func cancelImageDownloadTask(for state: UIControl.State) {
        courierImageBindings[ButtonImageSlot(state: state.rawValue, background: false)].cancelImageDownloadTask()
    }

    /// `cancelBackgroundImageDownloadTaskForState:`.
    public func cancelBackgroundImageDownloadTask(for state: UIControl.State) {
        courierImageBindings[ButtonImageSlot(state: state.rawValue, background: true)].cancelImageDownloadTask()
    }

    private func loadImage(
        _ url: URL, slot: ButtonImageSlot, placeholderImage: UIImage?,
        apply: @escaping @MainActor @Sendable (UIButton, UIImage?) -> Void
    ) {
        var request = URLRequest(url: url)
        request.addValue("image/*", forHTTPHeaderField: "Accept")
        courierImageBindings[slot].setImage(
            with: request, placeholder: nil, displaysNilPlaceholder: placeholderImage != nil,
            display: { [weak self] image in
                guard let button = self else { return }
                let decoded = image?.platformImage
                onMain { apply(button, decoded ?? placeholderImage) }
            }, success: nil, failure: nil)
    }
}

/// A UIButton image slot: a control state's raw value, and whether it is the background image.
public struct ButtonImageSlot: Hashable, Sendable {
    /// `UIControl.State.rawValue`.
    public var state: UInt
    /// True for the background image.
    public var background: Bool
}

extension UIActivityIndicatorView {
    /// `setAnimatingWithStateOfTask:`: animates while `task` runs.
    public func setAnimating(withStateOf task: SessionTask?) {
        let binding = associated(self, &runningBindingKey) {
            TaskRunningStateBinding { [weak self] running in
                guard let view = self else { return }
                onMain { if running { view.startAnimating() } else { view.stopAnimating() } }
            }
        }
        binding.bind(to: task)
    }
}

#if os(iOS)
extension UIRefreshControl {
    /// `setRefreshingWithStateOfTask:`: refreshing while `task` runs.
    public func setRefreshing(withStateOf task: SessionTask?) {
        let binding = associated(self, &runningBindingKey) {
            TaskRunningStateBinding { [weak self] running in
                guard let control = self else { return }
                onMain { if running { control.beginRefreshing() } else { control.endRefreshing() } }
            }
        }
        binding.bind(to: task)
    }
}
#endif

extension UIProgressView {
    /// `setProgressWithUploadProgressOfTask:animated:` / `…DownloadProgressOfTask:`.
    public func setProgress(of task: SessionTask?, direction: TransferProgress.Direction, animated: Bool) {
        // A new binding per call (it carries `animated`); the one it replaces stops with it.
        let binding = TaskProgressBinding { [weak self] fraction in
            guard let view = self else { return }
            onMain { view.setProgress(Float(fraction), animated: animated) }
        }
        objc_setAssociatedObject(self, &progressBindingKey, binding, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)
        binding.bind(to: task, direction: direction)
    }
}
#endif
