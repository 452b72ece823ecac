// Decoding on Apple platforms: the platform image for an ``Image``'s bytes. (Linux has no
// platform image library; there an Image is its bytes, format and pixel size.)
#if canImport(UIKit)
public import UIKit

extension Image {
    /// The bytes decoded by UIKit at ``scale``; nil when UIKit can't decode them.
    public var platformImage: UIImage? { UIImage(data: data, scale: CGFloat(scale)) }
}
#elseif canImport(AppKit)
public import AppKit

extension Image {
    /// The bytes decoded by AppKit, sized in points (pixels ÷ ``scale``); nil when AppKit can't
    /// decode them.
    public var platformImage: NSImage? {
        guard let image = NSImage(data: data) else { return nil }
        image.size = NSSize(width: width, height: height)
        return image
    }
}
#endif
