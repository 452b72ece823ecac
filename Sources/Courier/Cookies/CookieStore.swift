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

    /// What makes two cookies the same cookie (a new one replaces the old): RFC 6265bis §5.7
    /// step 22.
    private struct Identity: Hashable {
        var name: String
        var domain: String
        var isHostOnly: Bool
        var path: String

        init(_ cookie: HTTPCookieJar.Cookie) {
            name = cookie.name
            domain = cookie.domain
            isHostOnly = cookie.isHostOnly
            path = cookie.path
        }
    }

    /// The cookies by sequence number (storage order: a replacement keeps its place).
    private var bySequence: [UInt64: HTTPCookieJar.Cookie] = [:]
    /// Each cookie's sequence number by its identity.
    private var byIdentity: [Identity: UInt64] = [:]
    /// The sequence numbers of the cookies of each domain (a host-only cookie's is its host):
    /// a request looks only at its host's and its parent domains', a cap at one domain's.
    private var byDomain: [String: Set<UInt64>] = [:]
    /// The `Secure` cookies by name, for "leave secure cookies alone".
    private var secureByName: [String: Set<UInt64>] = [:]
    /// Least recently used first, in all and per domain; entries go stale as cookies are used.
    private var leastRecentlyUsed = CookieOrderHeap()
    private var leastRecentlyUsedByDomain: [String: CookieOrderHeap] = [:]
    /// The cookies that expire, soonest first; entries go stale as cookies are replaced.
    private var expiries = CookieOrderHeap()
    private var nextSequence: UInt64 = 0
    let limits: HTTPCookieJar.Limits

    /// Every stored cookie, in storage order (first stored first; a replacement keeps its place).
    var cookies: [HTTPCookieJar.Cookie] {
        bySequence.keys.sorted().compactMap { bySequence[$0] }
    }

    /// How many cookies are stored (expired ones not yet removed included).
    var count: Int { bySequence.count }

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
            secureByName[parsed.name, default: []].contains(where: { sequence in
                guard let stored = bySequence[sequence] else { return false }
                return (CookieMatching.domainMatches(stored.domain, domain) || CookieMatching.domainMatches(domain, stored.domain))
                    && CookieMatching.pathMatches(path, stored.path)
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

        let existing = byIdentity[Identity(cookie)].flatMap { bySequence[$0] }
        if let existing {
            cookie.creationDate = existing.creationDate
            cookie.sequence = existing.sequence
        }
        if let expires, expires <= now {
            guard let existing else { return .removed([]) }
            return .removed([remove(existing.sequence)].compactMap { $0 })
        }
        insert(cookie)
        if existing == nil {
            evict(now: now, keeping: cookie)
        }
        return .stored(cookie)
    }

    /// Stores `cookie` under its sequence number, replacing the one stored there, and indexes it.
    private mutating func insert(_ cookie: HTTPCookieJar.Cookie) {
        if let old = bySequence.updateValue(cookie, forKey: cookie.sequence), old.isSecure, !cookie.isSecure {
            secureByName[old.name]?.remove(old.sequence)
        }
        byIdentity[Identity(cookie)] = cookie.sequence
        byDomain[cookie.domain, default: []].insert(cookie.sequence)
        if cookie.isSecure { secureByName[cookie.name, default: []].insert(cookie.sequence) }
        used(cookie)
        if let expires = cookie.expiresDate { expiries.push(.init(date: expires, sequence: cookie.sequence)) }
        compactIfStale()
    }

    /// Records `cookie`'s last access in the eviction order.
    private mutating func used(_ cookie: HTTPCookieJar.Cookie) {
        let entry = CookieOrderHeap.Entry(date: cookie.lastAccessDate, sequence: cookie.sequence)
        leastRecentlyUsed.push(entry)
        leastRecentlyUsedByDomain[cookie.domain, default: CookieOrderHeap()].push(entry)
    }

    /// Removes the cookie with `sequence` and its index entries (heap entries go stale).
    @discardableResult
    private mutating func remove(_ sequence: UInt64) -> HTTPCookieJar.Cookie? {
        guard let cookie = bySequence.removeValue(forKey: sequence) else { return nil }
        byIdentity[Identity(cookie)] = nil
        byDomain[cookie.domain]?.remove(sequence)
        if byDomain[cookie.domain]?.isEmpty == true {
            byDomain[cookie.domain] = nil
            leastRecentlyUsedByDomain[cookie.domain] = nil
        }
        if cookie.isSecure {
            secureByName[cookie.name]?.remove(sequence)
            if secureByName[cookie.name]?.isEmpty == true { secureByName[cookie.name] = nil }
        }
        return cookie
    }

    /// Whether a heap entry still describes a stored cookie's last access.
    private func isCurrentUse(_ entry: CookieOrderHeap.Entry) -> Bool {
        bySequence[entry.sequence]?.lastAccessDate == entry.date
    }

    /// Rebuilds the heaps from the stored cookies once stale entries outnumber them (each
    /// rebuild is linear and follows at least as many pushes: amortised O(1) per push).
    private mutating func compactIfStale() {
        let live = bySequence.count
        guard leastRecentlyUsed.count > 2 * live + 64 || expiries.count > 2 * live + 64 else { return }
        var uses: [CookieOrderHeap.Entry] = []
        var usesByDomain: [String: [CookieOrderHeap.Entry]] = [:]
        var expiring: [CookieOrderHeap.Entry] = []
        uses.reserveCapacity(live)
        for cookie in bySequence.values {
            let entry = CookieOrderHeap.Entry(date: cookie.lastAccessDate, sequence: cookie.sequence)
            uses.append(entry)
            usesByDomain[cookie.domain, default: []].append(entry)
            if let expires = cookie.expiresDate { expiring.append(.init(date: expires, sequence: cookie.sequence)) }
        }
        leastRecentlyUsed = CookieOrderHeap(uses)
        leastRecentlyUsedByDomain = usesByDomain.mapValues { CookieOrderHeap($0) }
        expiries = CookieOrderHeap(expiring)
    }

    /// Drops expired cookies, then the least recently used beyond the per-domain and total caps.
    private mutating func evict(now: Date, keeping newest: HTTPCookieJar.Cookie) {
        removeExpired(now: now)
        let domain = newest.domain
        while let count = byDomain[domain]?.count, count > limits.maximumCookiesPerDomain,
            let entry = leastRecentlyUsedByDomain[domain]?.popFirst()
        {
            if isCurrentUse(entry) { remove(entry.sequence) }
        }
        while bySequence.count > limits.maximumCookies, let entry = leastRecentlyUsed.popFirst() {
            if isCurrentUse(entry) { remove(entry.sequence) }
        }
    }

    /// Removes every cookie that has expired at `now` (soonest first, from the expiry heap).
    mutating func removeExpired(now: Date) {
        while let entry = expiries.first, entry.date <= now {
            _ = expiries.popFirst()
            if let cookie = bySequence[entry.sequence], cookie.expiresDate == entry.date { remove(entry.sequence) }
        }
    }

    /// The cookies to send to `target` at `now`, in `Cookie` header order (longer paths first,
    /// then earlier created); their last-access time becomes `now`. Only the cookies of the
    /// host and its parent domains are looked at.
    mutating func cookies(for target: CookieRequestTarget, now: Date) -> [HTTPCookieJar.Cookie] {
        removeExpired(now: now)
        var matching: [HTTPCookieJar.Cookie] = []
        for domain in Self.domainsMatched(by: target.host) {
            guard let sequences = byDomain[domain] else { continue }
            for sequence in sequences {
                guard var cookie = bySequence[sequence] else { continue }
                let domainOK =
                    cookie.isHostOnly ? target.host == cookie.domain : CookieMatching.domainMatches(target.host, cookie.domain)
                guard domainOK, CookieMatching.pathMatches(target.path, cookie.path), !cookie.isSecure || target.isSecure
                else { continue }
                if cookie.lastAccessDate != now {
                    cookie.lastAccessDate = now
                    bySequence[sequence] = cookie
                    used(cookie)
                }
                matching.append(cookie)
            }
        }
        compactIfStale()
        return matching.sorted {
            if $0.path.utf8.count != $1.path.utf8.count { return $0.path.utf8.count > $1.path.utf8.count }
            return ($0.creationDate, $0.sequence) < ($1.creationDate, $1.sequence)
        }
    }

    /// The domains a cookie for `host` may be stored under: the host itself and, unless it is
    /// an IP address (never domain-matched), each parent domain (`a.b.example`, `b.example`,
    /// `example`).
    static func domainsMatched(by host: String) -> [String] {
        var domains = [host]
        guard !CookieMatching.isIPAddress(host) else { return domains }
        var rest = Substring(host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if !rest.isEmpty { domains.append(String(rest)) }
        }
        return domains
    }

    /// `name=value; name=value`, or nil when there is none. A nameless cookie is its value alone.
    static func headerValue(_ cookies: [HTTPCookieJar.Cookie]) -> String? {
        guard !cookies.isEmpty else { return nil }
        return cookies.map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Removes the cookies for which `shouldRemove` is true.
    mutating func removeAll(where shouldRemove: (HTTPCookieJar.Cookie) -> Bool) {
        for (sequence, cookie) in bySequence where shouldRemove(cookie) {
            remove(sequence)
        }
        compactIfStale()
    }
}
