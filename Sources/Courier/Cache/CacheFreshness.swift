import Foundation
import NIOHTTP1

/// Freshness of a stored response (RFC 9111 §4.2): its lifetime and its current age. Pure;
/// every time comes in as a value.
enum CacheFreshness {
    /// The share of the `Last-Modified` age used as heuristic lifetime (§4.2.2): 10 %.
    static let heuristicFraction = 0.1

    /// The freshness lifetime in seconds (§4.2.1): `max-age`, else `Expires` − `Date`, else
    /// 10 % of `Date` − `Last-Modified` for a status cacheable by default (or `public`), else 0.
    /// `s-maxage` is for shared caches and ignored. An invalid `Expires` means already stale.
    static func lifetime(of entry: CacheEntry) -> Double {
        let headers = entry.headers
        let control = CacheControl(headers["cache-control"])
        if let maxAge = control.maxAge { return Double(maxAge) }
        let date = HTTPDate.parse(headers.first(name: "date")) ?? entry.responseTime
        if headers.contains(name: "expires") {
            guard let expires = HTTPDate.parse(headers.first(name: "expires")) else { return 0 }
            return max(0, expires.timeIntervalSince(date))
        }
        if CacheStorability.heuristicallyCacheable.contains(entry.status) || control.isPublic,
            let lastModified = HTTPDate.parse(headers.first(name: "last-modified"))
        {
            return max(0, date.timeIntervalSince(lastModified) * heuristicFraction)
        }
        return 0
    }

    /// The current age in seconds at `now` (§4.2.3).
    static func currentAge(of entry: CacheEntry, now: Date) -> Double {
        let headers = entry.headers
        // Not a delta-seconds value: ignored. Leading zeros don't count; capped at 2^31 s.
        let ageValue = headers.first(name: "age").flatMap(CacheControl.deltaSeconds).map(Double.init) ?? 0
        let dateValue = HTTPDate.parse(headers.first(name: "date")) ?? entry.responseTime
        let apparentAge = max(0, entry.responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, entry.responseTime.timeIntervalSince(entry.requestTime))
        let correctedAgeValue = ageValue + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(entry.responseTime))
        return correctedInitialAge + residentTime
    }

    /// Whether the entry is fresh at `now`.
    static func isFresh(_ entry: CacheEntry, now: Date) -> Bool {
        lifetime(of: entry) > currentAge(of: entry, now: now)
    }
}
