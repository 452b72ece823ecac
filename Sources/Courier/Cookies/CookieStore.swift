import Foundation

/// The storage and retrieval model of RFC 6265bis §5.7–5.8 over plain values: what
/// ``HTTPCookieJar`` keeps behind its lock. Pure: the time and the request come in as
/// arguments, so every rule is testable without a clock or a network.
struct CookieStore: Sendable {
    /// What became of one `Set-Cookie` field.
    enum Outcome: Equatable, Sendable {
        /// Kept (new, or replacing one of the same name, domain, host-only flag and path).
        case stored(HTTPCookieJar.Cookie)
        /// Already expired (`Max-Age` ≤ 0 or a past `Expires`): these stored cookies went.
        case removed([HTTPCookieJar.Cookie])
        /// Ignored entirely, and why.
        case rejected(Rejection)
    }

    /// Why a `Set-Cookie` field was ignored.
    enum Rejection: Equatable, Sendable {
        /// Not parseable, a control character, empty, or over 4096 bytes of name and value.
        case malformed
        /// `Domain` is a public suffix (`com`, `co.uk`) other than the host itself.
        case publicSuffixDomain
        /// `Domain` doesn't domain-match the request's host (or the host is an IP address and
        /// `Domain` isn't exactly it).
        case domainMismatch
        /// `Secure` set by a response that didn't come over https.
        case secureFromInsecureOrigin
        /// A non-secure cookie from http would shadow a `Secure` one ("leave secure cookies alone").
        case shadowsSecureCookie
        /// `__Secure-` or `__Host-` without what the prefix promises.
        case prefixRequirementsNotMet
    }

    /// 6265bis caps a cookie's lifetime at 400 days.
    static let maximumLifetime: TimeInterval = 400 * 86_400

    private(set) var cookies: [HTTPCookieJar.Cookie] = []
    private var nextSequence: UInt64 = 0
    let limits: HTTPCookieJar.Limits

    init(limits: HTTPCookieJar.Limits) {
        self.limits = limits
    }

    /// Applies one `Set-Cookie` field received for `target` at `now`.
    mutating func store(
        _ field: String, from target: CookieRequestTarget, now: Date, publicSuffixes: PublicSuffixList
    ) -> Outcome {
        guard let parsed = SetCookieParser.parse(field) else { return .rejected(.malformed) }
        return store(parsed, from: target, now: now, publicSuffixes: publicSuffixes)
    }

    mutating func store(
        _ parsed: SetCookie, from target: CookieRequestTarget, now: Date, publicSuffixes: PublicSuffixList
    ) -> Outcome {
        let host = target.host
        // Expiry: Max-Age wins over Expires; both capped at 400 days.
        let latest = now.addingTimeInterval(Self.maximumLifetime)
        var expires: Date?
        if let maxAge = parsed.maxAge {
            expires = maxAge <= 0 ? .distantPast : now.addingTimeInterval(TimeInterval(min(maxAge, Int(Self.maximumLifetime))))
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

    /// `name=value; name=value`, or nil when there is none. A nameless cookie is its value alone.
    static func headerValue(_ cookies: [HTTPCookieJar.Cookie]) -> String? {
        guard !cookies.isEmpty else { return nil }
        return cookies.map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    mutating func removeAll(where shouldRemove: (HTTPCookieJar.Cookie) -> Bool) {
        cookies.removeAll(where: shouldRemove)
    }
}
