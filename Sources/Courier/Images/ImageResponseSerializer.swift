public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// AFNetworking's `AFImageResponseSerializer`: validates, then reads the image's format and
/// pixel size from its header into an ``Image`` (nothing is decoded: Linux has no platform
/// image library, and AFN's inflation is a UIKit drawing optimisation).
///
/// Acceptable content types: AFN's list (`image/tiff`, `image/jpeg`, `image/gif`,
/// `image/png`, `image/ico`, `image/x-icon`, `image/bmp`, `image/x-bmp`,
/// `image/x-xbitmap`, `image/x-win-bitmap`) plus `image/webp`, whose header ``Image`` reads.
/// Empty data gives nil; bytes in no known format throw
/// ``CourierError/responseSerializationFailed(reason:response:data:underlying:)``.
/// Thread-safe.
public final class ImageResponseSerializer: HTTPResponseSerializerWrapper {
    /// Holds the validation settings.
    public let base: HTTPResponseSerializer
    private let settings: LockedValue<Double>

    /// Creates a serializer producing images of `imageScale` (default 1).
    public init(imageScale: Double = 1) {
        base = HTTPResponseSerializer(acceptableContentTypes: [
            "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp",
            "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp",
        ])
        settings = LockedValue(imageScale > 0 ? imageScale : 1)
    }

    /// Pixels per point given to each ``Image`` (AFN's `imageScale`). Default 1.
    public var imageScale: Double {
        get { settings.value }
        set { settings.value = newValue > 0 ? newValue : 1 }
    }

    /// The image; nil for empty data or a content-type failure.
    /// - Throws: the validation error, or a serialization error for unknown bytes.
    public func responseObject(for response: HTTPURLResponse?, data: Data?) throws -> Image? {
        try serializeResponse(response, data: data).get(fallback: nil)
    }

    /// The image and the error together (a status-only failure still reads the image).
    public func serializeResponse(_ response: HTTPURLResponse?, data: Data?) -> SerializedResponse<Image?> {
        let validation = base.validation(response, data: data)
        if validation.skipsParsing { return SerializedResponse(object: .some(nil), error: validation.error) }
        guard let data, !data.isEmpty else { return SerializedResponse(object: .some(nil), error: validation.error) }
        guard let image = Image(data: data, scale: imageScale) else {
            return SerializedResponse(
                object: .some(nil),
                error: .responseSerializationFailed(
                    reason: "the data is not a PNG, JPEG, GIF, WebP, BMP, ICO or TIFF image", response: response,
                    data: data, underlying: validation.error))
        }
        return SerializedResponse(object: .some(image), error: validation.error)
    }
}
