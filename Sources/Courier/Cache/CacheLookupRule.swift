import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1

/// What to do with a request given what is stored (RFC 9111 §4 and `URLRequest.cachePolicy`
/// as Apple documents it). Pure: the stored entry and the time come in as values. Whether the
/// response is then stored doesn't depend on the policy (every policy stores, as URLCache
/// does): ``CacheStorability`` decides.
enum CacheLookupRule {
    /// The decision for one request.
    enum Decision: Equatable {
        /// Go to the network without using the cache (nothing usable stored, or the policy or
        /// request says so). The response may still be stored.
        case network
        /// Answer with the stored entry; nothing is sent.
        case serveStored
        /// Send the request with these conditional fields; a 304 serves the stored body.
        case validate([String: String])
        /// Nothing may be sent and nothing usable is stored (`.returnCacheDataDontLoad`,
        /// `only-if-cached`).
        case unavailable
    }

    /// Whether the cache takes part at all for this request: GET only, no `Range`, and no
    /// conditional fields of the caller's own (the caller validates itself then).
    static func participates(method: String, requestHeaders: HTTPHeaders) -> Bool {
        method.uppercased() == "GET" && !requestHeaders.contains(name: "range")
            && !requestHeaders.contains(name: "if-none-match") && !requestHeaders.contains(name: "if-modified-since")
            && !requestHeaders.contains(name: "if-match") && !requestHeaders.contains(name: "if-unmodified-since")
            && !requestHeaders.contains(name: "if-range")
    }

    /// The decision for a request with `policy` and `requestHeaders`, given `entry` (the stored
    /// response whose secondary key matched, or nil) at `now`.
    static func decide(policy: URLRequest.CachePolicy, requestHeaders: HTTPHeaders, entry: CacheEntry?, now: Date) -> Decision {
        let request = CacheControl(requestHeaders["cache-control"])
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .network
        case .returnCacheDataElseLoad:
            return entry == nil ? .network : .serveStored
        case .returnCacheDataDontLoad:
            return entry == nil ? .unavailable : .serveStored
        default:
            break
        }
        // .useProtocolCachePolicy (and .reloadRevalidatingCacheData: always validate).
        guard let entry else { return request.onlyIfCached ? .unavailable : .network }
        // What to do when the stored response can't be used as is (computed only then: a fresh
        // hit needs no conditional fields).
        var fallback: Decision {
            if request.onlyIfCached { return .unavailable }
            let conditional = Dictionary(
                CacheValidation.conditionalHeaders(for: entry).map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            return conditional.isEmpty ? .network : .validate(conditional)
        }
        let response = entry.cacheControl
        // Pragma: no-cache counts only when the request has no Cache-Control (§5.4).
        let pragmaNoCache = requestHeaders["cache-control"].isEmpty
            && requestHeaders["pragma"].contains { $0.lowercased().contains("no-cache") }
        if policy == .reloadRevalidatingCacheData || request.noCache || pragmaNoCache || response.noCache {
            return fallback
        }
        let lifetime = CacheFreshness.lifetime(of: entry)
        let age = CacheFreshness.currentAge(of: entry, now: now)
        if let maxAge = request.maxAge, age > Double(maxAge) { return fallback }
        if let minFresh = request.minFresh, lifetime - age < Double(minFresh) { return fallback }
        if lifetime > age { return .serveStored }
        // Stale: only `max-stale` may accept it, never with `must-revalidate` (§5.2.2.2).
        if let maxStale = request.maxStale, !response.mustRevalidate {
            if let limit = maxStale {
                if age - lifetime <= Double(limit) { return .serveStored }
            } else {
                return .serveStored
            }
        }
        return fallback
    }
}
