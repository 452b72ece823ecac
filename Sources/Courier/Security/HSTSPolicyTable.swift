import Foundation

/// The known HSTS hosts of RFC 6797 §8.1–8.3 over plain values: what ``HSTSStore`` keeps behind
/// its lock. Pure: the time comes in as an argument, so expiry, matching and eviction are
/// testable without a clock or a network.
struct HSTSPolicyTable: Sendable {
    /// The entries by canonical host.
    private(set) var entries: [String: HSTSStore.Entry] = [:]
    /// The most entries kept; past it the entry that expires soonest goes (one that never
    /// expires goes last, the oldest-added of those first).
    let maximumEntries: Int

    init(maximumEntries: Int) {
        self.maximumEntries = max(1, maximumEntries)
    }

    /// How many entries are kept (expired ones not yet dropped included).
    var count: Int { entries.count }

    /// Applies a `Strict-Transport-Security` field received from `host` over a secure
    /// connection at `now` (§8.1): `max-age=0` forgets the host, anything else (re)sets it.
    /// IP-address hosts are never noted (§8.1.1). Returns whether the table changed.
    @discardableResult
    mutating func note(_ header: StrictTransportSecurityHeader, host rawHost: String, now: Date) -> Bool {
        guard let host = HSTSPolicyTable.canonicalHost(rawHost), !CookieMatching.isIPAddress(host) else { return false }
        guard header.maxAge > 0 else {
            return entries.removeValue(forKey: host) != nil
        }
        let entry = HSTSStore.Entry(
            host: host, includesSubdomains: header.includesSubdomains,
            expiresDate: now.addingTimeInterval(TimeInterval(header.maxAge)))
        insert(entry, now: now)
        return true
    }

    /// Adds or replaces `entry` (its host already canonical), then evicts past the cap.
    mutating func insert(_ entry: HSTSStore.Entry, now: Date) {
        entries[entry.host] = entry
        evict(now: now, keeping: entry.host)
    }

    /// Adds or replaces `loaded` (hosts already canonical; a later one wins over an earlier one
    /// for the same host), then evicts past the cap once: a file of any length costs one sort.
    mutating func insert(contentsOf loaded: [HSTSStore.Entry], now: Date) {
        for entry in loaded { entries[entry.host] = entry }
        evict(now: now, keeping: nil)
    }

    /// Whether requests to `host` are sent over https at `now` (§8.2): a known host itself, or
    /// a subdomain of a known host that set `includeSubDomains`. Never for an IP address.
    func isKnownHost(_ rawHost: String, now: Date) -> Bool {
        guard let host = HSTSPolicyTable.canonicalHost(rawHost), !CookieMatching.isIPAddress(host) else { return false }
        if let entry = entries[host], !entry.isExpired(at: now) { return true }
        var rest = Substring(host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            guard !rest.isEmpty else { break }
            if let entry = entries[String(rest)], entry.includesSubdomains, !entry.isExpired(at: now) { return true }
        }
        return false
    }

    /// Drops the entries expired at `now`.
    mutating func removeExpired(now: Date) {
        entries = entries.filter { !$0.value.isExpired(at: now) }
    }

    /// Removes the entries for which `shouldRemove` is true.
    mutating func removeAll(where shouldRemove: (HSTSStore.Entry) -> Bool) {
        entries = entries.filter { !shouldRemove($0.value) }
    }

    /// Past the cap: expired entries first, then the soonest to expire, down to a tenth below
    /// the cap (so the sort this takes is paid once per many new hosts, not once per host); the
    /// entry just stored (`keeping`) stays.
    private mutating func evict(now: Date, keeping: String?) {
        guard entries.count > maximumEntries else { return }
        removeExpired(now: now)
        guard entries.count > maximumEntries else { return }
        let excess = entries.count - (maximumEntries - maximumEntries / 10)
        let victims = entries.values
            .filter { $0.host != keeping }
            .sorted { ($0.expiresDate ?? .distantFuture, $0.host) < ($1.expiresDate ?? .distantFuture, $1.host) }
            .prefix(excess)
        for victim in victims { entries[victim.host] = nil }
    }

    /// `url`'s https form when its scheme is `http` (or `ws`) and its host is known at `now`:
    /// the scheme becomes `https` (`wss`); port 80 (written or implied) goes, any other
    /// explicit port stays (as curl does: RFC 6797 §8.3 would make it 443, but a port number is
    /// what a developer's local server is told apart by). Nil when nothing changes.
    func upgradedURL(for url: URL, now: Date) -> URL? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "ws",
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let host = components.host, isKnownHost(host, now: now)
        else { return nil }
        components.scheme = scheme == "http" ? "https" : "wss"
        if components.port == 80 { components.port = nil }
        return components.url
    }

    /// Lowercase, no trailing dot, unbracketed, Unicode labels in Punycode (the cookie jar's
    /// canonical form).
    static func canonicalHost(_ host: String) -> String? {
        CookieMatching.canonicalHost(host)
    }
}
