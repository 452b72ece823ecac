#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
#else
import Foundation
#endif
import NIOHTTP1

/// The session's side of ``HSTSStore`` (``SessionConfiguration/hsts``): each hop's request is
/// upgraded before it is sent, and each response head received over https is noted.
extension TaskEnvironment {
    /// `request` with its `http://` URL made `https://` when the configuration's store knows the
    /// host (``HSTSStore/upgradedURL(for:)``), and the URL it had; `(request, nil)` when HSTS is
    /// off or the host isn't known.
    func upgradedForHSTS(_ request: URLRequest) -> (request: URLRequest, upgradedFrom: URL?) {
        guard let store = configuration.hsts, let url = request.url, let upgraded = store.upgradedURL(for: url) else {
            return (request, nil)
        }
        var request = request
        request.url = upgraded
        return (request, url)
    }

    /// Notes a response's `Strict-Transport-Security` for `url` in the configuration's store
    /// (only over https; the store ignores the rest). No I/O: cheap on an event loop.
    func noteStrictTransportSecurity(from headers: HTTPHeaders, url: URL) {
        guard let store = configuration.hsts else { return }
        let values = headers["strict-transport-security"]
        guard !values.isEmpty else { return }
        store.noteResponse(strictTransportSecurity: values, for: url)
    }
}
