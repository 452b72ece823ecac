public import Foundation

/// An image as downloaded: its bytes, its format and its size in pixels, read from the file
/// header (Linux has no platform image library; nothing is decoded).
///
/// ``ImageResponseSerializer`` makes these; `ImageDownloader` and the image cache store them.
/// A value type: `Sendable`, thread-safe.
public struct Image: Sendable, Hashable {
    /// A file format recognised from its signature.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// PNG (`\x89PNG`), size from IHDR.
        case png
        /// JPEG (`FF D8`), size from the first SOF segment.
        case jpeg
        /// GIF87a / GIF89a, size from the logical screen descriptor.
        case gif
        /// WebP (`RIFF....WEBP`), lossy, lossless or extended.
        case webp
        /// Windows bitmap (`BM`).
        case bmp
        /// Windows icon; the largest entry's size.
        case ico
        /// TIFF, either byte order; size from the first IFD.
        case tiff

        /// The usual MIME type (`image/png`, ...).
        public var mimeType: String {
            switch self {
            case .ico: return "image/x-icon"
            default: return "image/\(rawValue)"
            }
        }
    }

    /// The encoded bytes, as received.
    public let data: Data
    /// The format read from the signature.
    public let format: Format
    /// Width in pixels (for ICO, the largest entry's).
    public let pixelWidth: Int
    /// Height in pixels (for ICO, the largest entry's).
    public let pixelHeight: Int
    /// Pixels per point, AFN's `imageScale` (1 by default; 2 for `@2x` assets).
    public let scale: Double

    /// Reads the header of `data`; nil when the format is not recognised or the header is
    /// truncated. `scale` must be positive (default 1).
    public init?(data: Data, scale: Double = 1) {
        guard scale > 0, let header = ImageHeaderParser.parse([UInt8](data.prefix(ImageHeaderParser.maximumHeaderBytes(data))))
        else { return nil }
        self.data = data
        self.format = header.format
        self.pixelWidth = header.width
        self.pixelHeight = header.height
        self.scale = scale
    }

    /// Width in points: ``pixelWidth`` / ``scale``.
    public var width: Double { Double(pixelWidth) / scale }

    /// Height in points: ``pixelHeight`` / ``scale``.
    public var height: Double { Double(pixelHeight) / scale }

    /// Total pixel count, the cost a cache charges (4 bytes per pixel when decoded); `Int.max`
    /// when the header claims more (a PNG or TIFF may say 2³² − 1 × 2³² − 1).
    public var pixelCount: Int {
        let (count, overflow) = pixelWidth.multipliedReportingOverflow(by: pixelHeight)
        return overflow ? .max : count
    }
}
