#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// AFNetworking's `AFImageCache`: images stored and fetched by an identifier.
///
/// Implementations must be thread-safe: ``ImageDownloader`` calls them from its own queues.
public protocol ImageCache: AnyObject, Sendable {
    /// Stores `image` under `identifier`, replacing what was there.
    func add(_ image: Image, withIdentifier identifier: String)
    /// Removes the image stored under `identifier`; true when there was one.
    @discardableResult func removeImage(withIdentifier identifier: String) -> Bool
    /// Removes every image; true when there was at least one.
    @discardableResult func removeAllImages() -> Bool
    /// The image stored under `identifier`, or nil.
    func image(withIdentifier identifier: String) -> Image?
}

/// AFNetworking's `AFImageRequestCache`: an ``ImageCache`` keyed by a request's URL plus an
/// optional additional identifier (a filter name, a size).
public protocol ImageRequestCache: ImageCache {
    /// Stores `image` for `request` (and `identifier`), replacing what was there.
    func add(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?)
    /// Removes the image stored for `request` (and `identifier`); true when there was one.
    @discardableResult func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool
    /// The image stored for `request` (and `identifier`), or nil.
    func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Image?
    /// Whether ``ImageDownloader`` should store a downloaded `image` for `request`.
    func shouldCache(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool
}

extension ImageRequestCache {
    /// The cache key: AFN's, the URL's absolute string followed by the additional identifier
    /// (nothing when nil; a request without a URL keys as the empty string plus the identifier).
    ///
    /// Not AFN: a request carrying `Authorization`, `Cookie`, `Proxy-Authorization` or a token
    /// field (`X-Api-Key`, `X-Auth-Token`, `X-Amz-Security-Token`) gets a suffix after that, ` credentials-sha256=` and the SHA-256 (hex) of those fields' values
    /// (never the values), so one user's image is never another's (a downloader shared by several
    /// users, as in a server). A request with none of them keeps AFN's key exactly.
    public static func imageCacheKey(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> String {
        (request.url?.absoluteString ?? "") + (identifier ?? "") + ImageCredentialScope.keySuffix(for: request)
    }
}
