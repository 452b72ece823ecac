@testable import Courier
import Foundation

/// The cookie store's rules as a linear scan over one array (every store scans the jar, past
/// the cap it sorts it): slow, but plainly what RFC 6265bis §5.7 says, so the indexed
/// ``CookieStore`` is checked against it operation by operation.
struct ReferenceCookieStore {
    private(set) var cookies: [HTTPCookieJar.Cookie] = []
    private var nextSequence: UInt64 = 0
    let limits: HTTPCookieJar.Limits

    init(limits: HTTPCookieJar.Limits) {
        self.limits = limits
    }

    /// Applies one `Set-Cookie` field received for `target` at `now`.
    mutating func store(
        _ field: String, from target: CookieRequestTarget, now: Date, publicSuffixes: PublicSuffixList
    ) -> CookieStore.Outcome {
        guard let parsed = SetCookieParser.parse(field) else { return .rejected(.malformed) }
        return store(parsed, from: target, now: now, publicSuffixes: publicSuffixes)
    }

    mutating func store(
        _ parsed: SetCookie, from target: CookieRequestTarget, now: Date, publicSuffixes: PublicSuffixList
    ) -> CookieStore.Outcome {
        let host = target.host
        // Expiry: Max-Age wins over Expires; both capped at 400 days.
        let latest = now.addingTimeInterval(CookieStore.maximumLifetime)
        var expires: Date?
        if let maxAge = parsed.maxAge {
            expires = maxAge <= 0 ? .distantPast : now.addingTimeInterval(TimeInterval(min(maxAge, Int(CookieStore.maximumLifetime))))
        } else if let date = parsed.expires {
            expires = min(date, latest)
        }

        // Domain.
        var domain = host
        var hostOnly = true
        if let attribute = parsed.domain.flatMap(CookieMatching.canonicalHost) {
            if CookieMatching.isIPAddress(host) {
                guard attribute == host else { return .rejected(.domainMismatch) }
            } else if publicSuffixes.isPublicSuffix(attribute) {
                guard attribute == host else { return .rejected(.publicSuffixDomain) }
            } else {
                guard CookieMatching.domainMatches(host, attribute) else { return .rejected(.domainMismatch) }
                domain = attribute
                hostOnly = false
            }
        }
        let path = parsed.path ?? CookieMatching.defaultPath(target.path)

        if parsed.secure, !target.isSecure { return .rejected(.secureFromInsecureOrigin) }

        // Prefixes (case-insensitive, as in current 6265bis drafts); a nameless cookie can't
        // fake one through its value.
        let prefixed = (parsed.name.isEmpty ? parsed.value : parsed.name).lowercased()
        if prefixed.hasPrefix("__secure-"), !parsed.secure || parsed.name.isEmpty {
            return .rejected(.prefixRequirementsNotMet)
        }
        if prefixed.hasPrefix("__host-"), !parsed.secure || parsed.name.isEmpty || !hostOnly || path != "/" {
            return .rejected(.prefixRequirementsNotMet)
        }

        // Leave secure cookies alone: http can't overwrite or shadow a Secure cookie.
        if !parsed.secure, !target.isSecure,
            cookies.contains(where: {
                $0.isSecure && $0.name == parsed.name
                    && (CookieMatching.domainMatches($0.domain, domain) || CookieMatching.domainMatches(domain, $0.domain))
                    && CookieMatching.pathMatches(path, $0.path)
            })
        {
            return .rejected(.shadowsSecureCookie)
        }

        var cookie = HTTPCookieJar.Cookie(
            name: parsed.name, value: parsed.value, domain: domain, isHostOnly: hostOnly, path: path,
            expiresDate: expires, isSecure: parsed.secure, isHTTPOnly: parsed.httpOnly, sameSite: parsed.sameSite,
            creationDate: now, lastAccessDate: now)
        cookie.sequence = nextSequence
        nextSequence &+= 1

        let existing = cookies.firstIndex {
            $0.name == cookie.name && $0.domain == cookie.domain && $0.isHostOnly == cookie.isHostOnly && $0.path == cookie.path
        }
        if let existing {
            cookie.creationDate = cookies[existing].creationDate
            cookie.sequence = cookies[existing].sequence
        }
        if let expires, expires <= now {
            guard let existing else { return .removed([]) }
            return .removed([cookies.remove(at: existing)])
        }
        if let existing {
            cookies[existing] = cookie
        } else {
            cookies.append(cookie)
            evict(now: now, keeping: cookie)
        }
        return .stored(cookie)
    }

    /// Drops expired cookies, then the least recently used beyond the per-domain and total caps.
    private mutating func evict(now: Date, keeping newest: HTTPCookieJar.Cookie) {
        removeExpired(now: now)
        let sameDomain = cookies.indices.filter { cookies[$0].domain == newest.domain }
        if sameDomain.count > limits.maximumCookiesPerDomain {
            let victims = leastRecentlyUsed(sameDomain, count: sameDomain.count - limits.maximumCookiesPerDomain)
            cookies = cookies.enumerated().filter { !victims.contains($0.offset) }.map(\.element)
        }
        if cookies.count > limits.maximumCookies {
            let victims = leastRecentlyUsed(Array(cookies.indices), count: cookies.count - limits.maximumCookies)
            cookies = cookies.enumerated().filter { !victims.contains($0.offset) }.map(\.element)
        }
    }

    private func leastRecentlyUsed(_ indices: [Int], count: Int) -> Set<Int> {
        let ordered = indices.sorted {
            (cookies[$0].lastAccessDate, cookies[$0].sequence) < (cookies[$1].lastAccessDate, cookies[$1].sequence)
        }
        return Set(ordered.prefix(count))
    }

    mutating func removeExpired(now: Date) {
        cookies.removeAll { $0.expiresDate.map { $0 <= now } ?? false }
    }

    /// The cookies to send to `target` at `now`, in `Cookie` header order (longer paths first,
    /// then earlier created); their last-access time becomes `now`.
    mutating func cookies(for target: CookieRequestTarget, now: Date) -> [HTTPCookieJar.Cookie] {
        removeExpired(now: now)
        var matching: [Int] = []
        for (index, cookie) in cookies.enumerated() {
            let domainOK =
                cookie.isHostOnly ? target.host == cookie.domain : CookieMatching.domainMatches(target.host, cookie.domain)
            guard domainOK, CookieMatching.pathMatches(target.path, cookie.path), !cookie.isSecure || target.isSecure else {
                continue
            }
            matching.append(index)
        }
        for index in matching { cookies[index].lastAccessDate = now }
        return matching.map { cookies[$0] }.sorted {
            if $0.path.utf8.count != $1.path.utf8.count { return $0.path.utf8.count > $1.path.utf8.count }
            return ($0.creationDate, $0.sequence) < ($1.creationDate, $1.sequence)
        }
    }

}
