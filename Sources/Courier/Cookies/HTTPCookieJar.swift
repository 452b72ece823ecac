public import Foundation
import Synchronization

/// The session's cookies, kept by Courier's own rules (RFC 6265bis) rather than
/// FoundationNetworking's `HTTPCookieStorage`, which on Linux accepts `Domain=com`, ignores
/// `Max-Age` and sends `Secure` cookies over http.
///
/// Set it as ``SessionConfiguration/cookieJar``: every response's `Set-Cookie` fields (each
/// redirect hop's too) go in, and every request that has no `Cookie` header of its own and
/// leaves `httpShouldHandleCookies` on gets one from it.
///
/// The rules:
/// - `Max-Age` wins over `Expires`; `Max-Age` ≤ 0 or a past `Expires` deletes the cookie;
///   lifetimes are capped at 400 days; every RFC 6265 date form is read. Without either the
///   cookie lasts as long as the jar (a session cookie).
/// - `Domain` (a leading dot ignored) must domain-match the request's host and must not be a
///   public suffix (``PublicSuffixList``) unless it is the host itself, which makes the cookie
///   host-only. A host that is an IP address only gets host-only cookies, and IP addresses are
///   never domain-matched. Without `Domain`, a cookie is host-only.
/// - `Path` defaults to the request path's directory.
/// - `Secure` cookies are only accepted from, and only sent to, https (and wss); an http response
///   may not set a cookie that would overwrite or shadow a `Secure` one.
/// - `__Secure-` names need `Secure`; `__Host-` names need `Secure`, no `Domain` and `Path=/`.
/// - `HttpOnly` is kept (every request Courier makes is an HTTP API).
/// - `SameSite` is parsed and kept on the cookie but does not restrict sending: a client library
///   has no browsing context, so every request counts as same-site (as in curl and URLSession).
/// - Name and value together at most 4096 bytes; ``Limits`` caps the cookies per domain and in
///   total, evicting expired cookies first, then the least recently used.
/// - Sent as `name=value; …`, longer paths first, then older cookies first.
///
/// Hosts are compared lowercase, without a trailing dot, with Unicode labels converted to
/// Punycode; no other IDNA mapping is applied. Ports are ignored, as cookies ignore them.
///
/// Cookies live in memory only. Thread-safe: every call takes the jar's lock briefly and does
/// no I/O; share one jar between sessions to share their cookies. Storing a cookie costs
/// O(log n) in the jar's size (eviction included), and a request reads only the cookies of
/// its host and that host's parent domains.
public final class HTTPCookieJar: Sendable {
    /// `SameSite`: kept as the server sent it; see the type's notes for what Courier does with it.
    public enum SameSite: String, Sendable, Hashable {
        /// `SameSite=Strict`.
        case strict
        /// `SameSite=Lax`.
        case lax
        /// `SameSite=None`.
        case none
        /// Absent or unrecognised.
        case unspecified
    }

    /// A stored cookie.
    public struct Cookie: Sendable, Hashable {
        /// The name; may be empty (then the header carries the value alone).
        public var name: String
        /// The value, as the server sent it.
        public var value: String
        /// The host (host-only) or domain it belongs to, lowercase, without a leading dot.
        public var domain: String
        /// Sent only to exactly ``domain`` (no `Domain` attribute, or an IP address host).
        public var isHostOnly: Bool
        /// Sent to this path and below.
        public var path: String
        /// When it expires; nil for a session cookie (kept as long as the jar).
        public var expiresDate: Date?
        /// Sent over https only.
        public var isSecure: Bool
        /// `HttpOnly`.
        public var isHTTPOnly: Bool
        /// `SameSite`.
        public var sameSite: SameSite
        /// When it was first stored (kept when the server replaces it).
        public var creationDate: Date
        /// When it was last stored or sent.
        public var lastAccessDate: Date
        /// Creation order, for equal creation times.
        var sequence: UInt64 = 0

        /// Whether it lasts only as long as the jar.
        public var isSessionOnly: Bool { expiresDate == nil }

        init(
            name: String, value: String, domain: String, isHostOnly: Bool = true, path: String = "/",
            expiresDate: Date? = nil, isSecure: Bool = false, isHTTPOnly: Bool = false, sameSite: SameSite = .unspecified,
            creationDate: Date = Date(), lastAccessDate: Date = Date()
        ) {
            self.name = name
            self.value = value
            self.domain = domain
            self.isHostOnly = isHostOnly
            self.path = path
            self.expiresDate = expiresDate
            self.isSecure = isSecure
            self.isHTTPOnly = isHTTPOnly
            self.sameSite = sameSite
            self.creationDate = creationDate
            self.lastAccessDate = lastAccessDate
        }
    }

    /// How many cookies a jar keeps.
    public struct Limits: Sendable, Equatable {
        /// Per domain (host-only cookies count under their host). 180, as Chrome.
        public var maximumCookiesPerDomain: Int = 180
        /// In all. 3000, RFC 6265's minimum.
        public var maximumCookies: Int = 3_000

        /// The defaults described on each property.
        public init() {}
    }

    private let store: Mutex<CookieStore>
    private let publicSuffixes: PublicSuffixList
    private let clock: @Sendable () -> Date

    /// An empty jar.
    /// - Parameters:
    ///   - publicSuffixList: which `Domain` values are refused; the list shipped with Courier by
    ///     default, or a newer one (``PublicSuffixList/init(contentsOf:)``).
    ///   - limits: how many cookies are kept.
    ///   - clock: the current time, for expiry; `Date()` by default (inject one in tests).
    public init(
        publicSuffixList: PublicSuffixList = .shipped, limits: Limits = Limits(),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = Mutex(CookieStore(limits: limits))
        self.publicSuffixes = publicSuffixList
        self.clock = clock
    }

    /// Stores the cookies of a response's `Set-Cookie` fields (one field each: their dates hold
    /// commas, so fields must not be joined) received for `url`. Fields the rules refuse are
    /// ignored.
    /// - Returns: the cookies stored or replaced (expired ones removed are not returned).
    @discardableResult
    public func storeCookies(fromSetCookieFields fields: [String], for url: URL) -> [Cookie] {
        storeCookiesReportingRemovals(fromSetCookieFields: fields, for: url).stored
    }

    /// As ``storeCookies(fromSetCookieFields:for:)``, also returning the cookies a field deleted.
    func storeCookiesReportingRemovals(fromSetCookieFields fields: [String], for url: URL) -> (
        stored: [Cookie], removed: [Cookie]
    ) {
        guard !fields.isEmpty, let target = CookieRequestTarget(url) else { return ([], []) }
        let now = clock()
        return store.withLock { store in
            var stored: [Cookie] = [], removed: [Cookie] = []
            for field in fields {
                switch store.store(field, from: target, now: now, publicSuffixes: publicSuffixes) {
                case .stored(let cookie): stored.append(cookie)
                case .removed(let cookies): removed += cookies
                case .rejected: continue
                }
            }
            return (stored, removed)
        }
    }

    /// The cookies a request to `url` carries now, in header order (longer paths first, then
    /// older first). Marks them used.
    public func cookies(for url: URL) -> [Cookie] {
        guard let target = CookieRequestTarget(url) else { return [] }
        let now = clock()
        return store.withLock { $0.cookies(for: target, now: now) }
    }

    /// The `Cookie` header value for a request to `url` (`a=1; b=2`), or nil when no cookie
    /// applies.
    public func cookieHeader(for url: URL) -> String? {
        CookieStore.headerValue(cookies(for: url))
    }

    /// Every unexpired cookie, in storage order.
    public var allCookies: [Cookie] {
        let now = clock()
        return store.withLock { store in
            store.removeExpired(now: now)
            return store.cookies
        }
    }

    /// Removes the cookies for which `shouldRemove` is true (called under the jar's lock: don't
    /// use the jar from it).
    public func removeCookies(where shouldRemove: (Cookie) -> Bool) {
        store.withLock { $0.removeAll(where: shouldRemove) }
    }

    /// Empties the jar.
    public func removeAll() {
        removeCookies { _ in true }
    }
}
