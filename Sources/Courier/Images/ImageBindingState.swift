import Foundation

/// UIImageView+AFNetworking's rules as a value (pure: no downloads, no views): which download is
/// the active one, so that only its result is applied, a request for the URL already loading is
/// a no-op, and a new URL cancels the old download.
struct ImageBindingState<Receipt> {
    struct Active {
        let id: UUID
        let urlIdentifier: String
        var receipt: Receipt?
    }

    /// What ``request(urlIdentifier:)`` decided.
    enum Start {
        /// No usable URL: show the placeholder and fail; `cancel` is the previous download, if any.
        case badURL(cancel: Receipt?)
        /// The URL is the one already loading: do nothing.
        case sameURL
        /// Load it under `id` (after cancelling `cancel`, the previous download).
        case start(id: UUID, cancel: Receipt?)
    }

    private(set) var active: Active?

    /// A new request for the view: `urlIdentifier` is its ``ImageDownloader/mergeKey(of:)`` (the
    /// URL's absolute string, plus a credential suffix; nil: no fetchable URL).
    mutating func request(urlIdentifier: String?) -> Start {
        guard let urlIdentifier else {
            let previous = active?.receipt
            active = nil
            return .badURL(cancel: previous)
        }
        if let active, active.urlIdentifier == urlIdentifier { return .sameURL }
        let previous = active?.receipt
        let id = UUID()
        active = Active(id: id, urlIdentifier: urlIdentifier, receipt: nil)
        return .start(id: id, cancel: previous)
    }

    /// Records the receipt of download `id` (ignored if another request replaced it meanwhile).
    /// Returns false when `id` is no longer active, so the caller can cancel that receipt.
    mutating func attach(_ receipt: Receipt, to id: UUID) -> Bool {
        guard active?.id == id else { return false }
        active?.receipt = receipt
        return true
    }

    /// Download `id` ended (image, failure or a synchronous cache hit): true when it is still the
    /// active one (then its result applies and nothing is active any more).
    mutating func finish(_ id: UUID) -> Bool {
        guard active?.id == id else { return false }
        active = nil
        return true
    }

    /// `cancelImageDownloadTask`: forgets the active download and returns its receipt to cancel.
    mutating func cancel() -> Receipt? {
        defer { active = nil }
        return active?.receipt
    }
}
