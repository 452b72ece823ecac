public import Foundation
import Synchronization

/// HTTP Strict Transport Security (RFC 6797): the hosts that asked to be reached over https
/// only, and the rule that sends them nothing in the clear.
///
/// Set it as ``SessionConfiguration/hsts`` (nil, the default, turns HSTS off, as in curl):
/// - every response received over https (each redirect hop's too) whose host is a name, not an
///   IP address, has its first `Strict-Transport-Security` field applied: `max-age` (seconds)
///   sets how long the host is known, `max-age=0` forgets it, `includeSubDomains` extends the
///   policy to every subdomain. A malformed field (no `max-age`, a directive twice, a value
///   that isn't a number) is ignored whole (RFC 6797 §6.1). Fields received over http are
///   never applied (§8.1).
/// - every `http://` request of a data, upload or download task to a known host is rewritten
///   to `https://` before a byte is sent, each redirect hop included (WebSocket handshakes are
///   not rewritten). Port 80, written or implied, becomes
///   https's default; any other explicit port is kept, as curl does (so `http://dev.test:8080`
///   becomes `https://dev.test:8080`). The task's metrics say so
///   (`EngineMetrics/hstsUpgradedFrom`).
///
/// Persistence is curl's HSTS cache format (``init(contentsOf:maximumEntries:clock:)``,
/// ``write(to:)``): one file, written atomically. The store holds at most ``maximumEntries``
/// hosts; past that, expired entries go first, then the ones that expire soonest (down to a
/// tenth below the cap, so that eviction's sort is paid once per many new hosts).
///
/// Thread-safe: every call takes the store's lock briefly; only the two file methods do I/O.
/// Share one store between sessions to share what they learnt.
public final class HSTSStore: Sendable {
    /// A known host.
    public struct Entry: Sendable, Hashable {
        /// The host, lowercase, without a trailing dot, Unicode labels in Punycode.
        public var host: String
        /// The policy covers every subdomain of ``host`` too (`includeSubDomains`).
        public var includesSubdomains: Bool
        /// When the policy ends; nil for never (curl's `"unlimited"`, only read from a file).
        public var expiresDate: Date?

        /// An entry (used by the store and its file; `host` canonical).
        public init(host: String, includesSubdomains: Bool, expiresDate: Date?) {
            self.host = host
            self.includesSubdomains = includesSubdomains
            self.expiresDate = expiresDate
        }

        /// Whether the policy has ended at `date`.
        func isExpired(at date: Date) -> Bool {
            guard let expiresDate else { return false }
            return expiresDate <= date
        }
    }

    /// The default of ``maximumEntries``: 10,000 hosts.
    public static let defaultMaximumEntries = 10_000

    /// The most hosts the store keeps (and writes).
    public let maximumEntries: Int
    private let table: Mutex<HSTSPolicyTable>
    private let clock: @Sendable () -> Date

    /// An empty store.
    /// - Parameters:
    ///   - maximumEntries: the most hosts kept (at least 1).
    ///   - clock: the current time, for expiry; `Date()` by default (inject one in tests).
    public init(maximumEntries: Int = HSTSStore.defaultMaximumEntries, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.maximumEntries = max(1, maximumEntries)
        self.table = Mutex(HSTSPolicyTable(maximumEntries: maximumEntries))
        self.clock = clock
    }

    /// A store holding the entries of the file at `url` (curl's HSTS cache format; see the
    /// type's notes), or empty when there is no file there. Expired entries and lines that
    /// are not entries are skipped; past ``maximumEntries``, the ones that expire soonest.
    /// - Throws: ``CourierError/hstsFileFailed(path:reason:)`` when the file exists but can't be
    ///   read, is not a regular file, is larger than 16 MiB, or is not UTF-8 text.
    public convenience init(
        contentsOf url: URL, maximumEntries: Int = HSTSStore.defaultMaximumEntries,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(CourierError) {
        self.init(maximumEntries: maximumEntries, clock: clock)
        guard let text = try HSTSFile.read(url) else { return }
        let now = clock()
        let loaded = HSTSFile.entries(in: text).filter { !$0.isExpired(at: now) }
        table.withLock { $0.insert(contentsOf: loaded, now: now) }
    }

    /// Writes the unexpired entries to `url` in curl's HSTS cache format, atomically (a
    /// temporary file beside it, mode 0600, renamed over it). Does file I/O on the calling
    /// thread: don't call it from an event loop.
    /// - Throws: ``CourierError/hstsFileFailed(path:reason:)``.
    public func write(to url: URL) throws(CourierError) {
        try HSTSFile.write(HSTSFile.text(for: entries), to: url)
    }

    /// Applies a response's `Strict-Transport-Security` field values (only the first counts,
    /// RFC 6797 §8.1) received for `url`: only when `url` is `https` (or `wss`) and its host is
    /// not an IP address. Returns whether the store changed.
    @discardableResult
    public func noteResponse(strictTransportSecurity values: [String], for url: URL) -> Bool {
        guard let first = values.first, let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "wss",
            let host = url.host, let header = StrictTransportSecurityHeader.parse(first)
        else { return false }
        let now = clock()
        return table.withLock { $0.note(header, host: host, now: now) }
    }

    /// Whether requests to `host` go over https only now: it is known, or it is a subdomain of
    /// a known host whose policy includes subdomains.
    public func isKnownHost(_ host: String) -> Bool {
        let now = clock()
        return table.withLock { $0.isKnownHost(host, now: now) }
    }

    /// `url` upgraded when its scheme is `http` (to `https`) or `ws` (to `wss`) and its host is
    /// known (see the type's notes for ports); nil when it is sent as it is.
    public func upgradedURL(for url: URL) -> URL? {
        let now = clock()
        return table.withLock { $0.upgradedURL(for: url, now: now) }
    }

    /// The unexpired entries, sorted by host.
    public var entries: [Entry] {
        let now = clock()
        return table.withLock { table in
            table.removeExpired(now: now)
            return table.entries.values.sorted { $0.host < $1.host }
        }
    }

    /// Adds (or replaces) an entry: a host to reach over https only until `expiresDate`
    /// (nil: always). An IP address or an empty host is ignored.
    public func add(host: String, includesSubdomains: Bool = false, expiresDate: Date?) {
        guard let canonical = HSTSPolicyTable.canonicalHost(host), !CookieMatching.isIPAddress(canonical) else { return }
        let now = clock()
        table.withLock {
            $0.insert(Entry(host: canonical, includesSubdomains: includesSubdomains, expiresDate: expiresDate), now: now)
        }
    }

    /// Removes the entries for which `shouldRemove` is true (called under the store's lock:
    /// don't use the store from it).
    public func removeEntries(where shouldRemove: (Entry) -> Bool) {
        table.withLock { $0.removeAll(where: shouldRemove) }
    }

    /// Forgets every host.
    public func removeAll() {
        removeEntries { _ in true }
    }
}
