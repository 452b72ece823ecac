@testable import Courier
import Foundation
import Synchronization
import Testing

/// The pure cookie rules, with plain values: `Set-Cookie` parsing, cookie dates, the public
/// suffix list, domain/path matching and the storage model.
@Suite("Cookie rules")
struct CookieRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let list = PublicSuffixList.shipped

    static func target(_ host: String, _ path: String = "/", secure: Bool = false) -> CookieRequestTarget {
        CookieRequestTarget(host: host, path: path, isSecure: secure)
    }

    /// Stores each field for `from` at `now` and returns the outcomes.
    static func store(_ store: inout CookieStore, _ from: CookieRequestTarget, at now: Date = now, _ fields: String...)
        -> [CookieStore.Outcome]
    {
        fields.map { store.store($0, from: from, now: now, publicSuffixes: list) }
    }

    static func header(_ store: inout CookieStore, _ to: CookieRequestTarget, at now: Date = now) -> String? {
        CookieStore.headerValue(store.cookies(for: to, now: now))
    }

    // MARK: - Parser

    @Test func parsesNameValueAndAttributes() throws {
        let cookie = try #require(
            SetCookieParser.parse(
                " id = a b ; Domain=.Example.COM; Path=/docs; Secure; HttpOnly; SameSite=Lax; Max-Age=60; Unknown=1"))
        #expect(cookie.name == "id" && cookie.value == "a b")
        #expect(cookie.domain == "example.com" && cookie.path == "/docs")
        #expect(cookie.secure && cookie.httpOnly && cookie.sameSite == .lax && cookie.maxAge == 60)
        // No '=': an empty name; the last of a repeated attribute wins; a bad Path is the default.
        let bare = try #require(SetCookieParser.parse("token; Path=/a; Path=relative; SameSite=bogus"))
        #expect(bare.name == "" && bare.value == "token" && bare.path == nil && bare.sameSite == .unspecified)
        #expect(SetCookieParser.parse("a=1; SameSite=none")?.sameSite == HTTPCookieJar.SameSite.none)
        #expect(SetCookieParser.parse("a=1; samesite=STRICT")?.sameSite == .strict)
    }

    @Test func refusesMalformedFields() {
        #expect(SetCookieParser.parse("=") == nil)
        #expect(SetCookieParser.parse("  ;Path=/") == nil)
        #expect(SetCookieParser.parse("a=b\u{01}c") == nil)
        #expect(SetCookieParser.parse("a=b\nSet-Cookie: c=d") == nil)
        // Name and value together at most 4096 bytes.
        #expect(SetCookieParser.parse("a=" + String(repeating: "x", count: 4_096))?.name == nil)
        #expect(SetCookieParser.parse("a=" + String(repeating: "x", count: 4_095))?.name == "a")
        // An oversized attribute is ignored, not the cookie.
        let long = SetCookieParser.parse("a=1; Path=/" + String(repeating: "p", count: 1_024))
        #expect(long?.name == "a" && long?.path == nil)
        // An empty Domain is ignored.
        #expect(SetCookieParser.parse("a=1; Domain=")?.domain == nil)
    }

    @Test func maxAgeIsDigitsWithAnOptionalMinusAndSaturates() {
        #expect(SetCookieParser.maxAge("3600") == 3600)
        #expect(SetCookieParser.maxAge("-5") == -5)
        #expect(SetCookieParser.maxAge("0") == 0)
        #expect(SetCookieParser.maxAge("+5") == nil)
        #expect(SetCookieParser.maxAge("5s") == nil)
        #expect(SetCookieParser.maxAge("") == nil)
        #expect(SetCookieParser.maxAge("99999999999999999999999") == Int.max)
        #expect(SetCookieParser.maxAge("-99999999999999999999999") == Int.min)
    }

    @Test func readsEveryCookieDateForm() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // 1994-11-06 08:49:37 UTC
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "Sun, 06-Nov-1994 08:49:37 GMT", "06 nov 1994 8:49:37", "Sun, 06 NOVEMBER 1994 08:49:37 UTC+5",
        ] {
            #expect(CookieDateParser.date(text) == expected, "\(text)")
        }
        #expect(CookieDateParser.date("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(CookieDateParser.date("Tue, 29 Feb 2028 12:00:00 GMT") != nil)
        #expect(CookieDateParser.date("Tue, 29 Feb 2027 12:00:00 GMT") == nil)
        #expect(CookieDateParser.date("Sun, 06 Nov 1994 24:00:00 GMT") == nil)
        #expect(CookieDateParser.date("Sun, 06 Nov 1600 08:49:37 GMT") == nil)
        #expect(CookieDateParser.date("garbage") == nil)
        #expect(CookieDateParser.date("") == nil)
    }

    // MARK: - Public suffix list

    @Test func publicSuffixesFromTheShippedList() {
        let list = Self.list
        #expect(list.ruleCount > 9_000)
        #expect(list.isPublicSuffix("com") && list.isPublicSuffix("co.uk") && list.isPublicSuffix("CO.UK."))
        #expect(!list.isPublicSuffix("example.co.uk") && !list.isPublicSuffix("example.com"))
        #expect(list.isPublicSuffix("github.io"))  // private section
        #expect(list.isPublicSuffix("unlistedtld"))  // the implicit * rule
        #expect(list.publicSuffix(of: "www.example.co.uk") == "co.uk")
        #expect(list.registrableDomain(of: "www.example.co.uk") == "example.co.uk")
        #expect(list.registrableDomain(of: "co.uk") == nil)
        // The MPL-2.0 header travels with the data.
        #expect(PublicSuffixList.shippedText.hasPrefix("// This Source Code Form is subject to the terms of the Mozilla Public"))
    }

    @Test func wildcardAndExceptionRules() throws {
        let list = Self.list
        // *.ck and !www.ck
        #expect(list.isPublicSuffix("anything.ck"))
        #expect(!list.isPublicSuffix("www.ck"))
        #expect(list.publicSuffix(of: "www.ck") == "ck")
        #expect(list.publicSuffix(of: "a.b.ck") == "b.ck")
        #expect(list.registrableDomain(of: "a.b.ck") == "a.b.ck")
        // A list of one's own, as loaded at run time.
        let custom = try PublicSuffixList(text: "// comment\nexample\n*.wild.example\n!keep.wild.example  trailing\n")
        #expect(custom.ruleCount == 3)
        #expect(custom.isPublicSuffix("x.wild.example"))
        #expect(!custom.isPublicSuffix("keep.wild.example"))
        #expect(custom.publicSuffix(of: "a.keep.wild.example") == "wild.example")
        #expect(!custom.isPublicSuffix("other.example"))
    }

    @Test func internationalisedRulesAndHostsCompareAsPunycode() {
        #expect(Punycode.asciiLabel("bücher") == "xn--bcher-kva")
        #expect(Punycode.asciiLabel("公司") == "xn--55qx5d")
        #expect(Punycode.asciiLabel("example") == "example")
        #expect(Punycode.encode(Array("ü".unicodeScalars)) == "tda")
        // A Unicode label longer than any DNS label is refused, not encoded.
        #expect(Punycode.asciiLabel(Substring(String(repeating: "ü", count: 64))) == nil)
        #expect(CookieMatching.canonicalHost(String(repeating: "é", count: 5_000) + ".example") == nil)
        // 公司.cn is a rule; its A-label form is what a host arrives as.
        #expect(Self.list.isPublicSuffix("xn--55qx5d.cn"))
        #expect(Self.list.isPublicSuffix("公司.cn"))
        #expect(!Self.list.isPublicSuffix("example.xn--55qx5d.cn"))
    }

    @Test func aListThatCantBeReadIsATypedError() throws {
        #expect(throws: PublicSuffixList.LoadError.self) { try PublicSuffixList(text: "// only comments\n\n") }
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).dat")
        #expect(throws: PublicSuffixList.LoadError.self) { try PublicSuffixList(contentsOf: missing) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("psl-\(UUID().uuidString).dat")
        try Data("com\nco.uk\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let loaded = try PublicSuffixList(contentsOf: file)
        #expect(loaded.ruleCount == 2 && loaded.isPublicSuffix("co.uk"))
    }

    // MARK: - Matching

    @Test func domainPathAndDefaultPathRules() {
        #expect(CookieMatching.domainMatches("www.example.com", "example.com"))
        #expect(CookieMatching.domainMatches("example.com", "example.com"))
        #expect(!CookieMatching.domainMatches("badexample.com", "example.com"))
        #expect(!CookieMatching.domainMatches("10.1.2.3", "2.3"))
        #expect(CookieMatching.isIPAddress("10.1.2.3") && CookieMatching.isIPAddress("::1"))
        #expect(CookieMatching.isIPAddress("0x7f.1") && CookieMatching.isIPAddress("2130706433"))
        #expect(!CookieMatching.isIPAddress("example.com") && !CookieMatching.isIPAddress("1.example"))
        #expect(CookieMatching.pathMatches("/docs", "/docs"))
        #expect(CookieMatching.pathMatches("/docs/a", "/docs"))
        #expect(CookieMatching.pathMatches("/docs/a", "/docs/"))
        #expect(!CookieMatching.pathMatches("/docsx", "/docs"))
        #expect(!CookieMatching.pathMatches("/", "/docs"))
        #expect(CookieMatching.defaultPath("/a/b/c") == "/a/b")
        #expect(CookieMatching.defaultPath("/a") == "/")
        #expect(CookieMatching.defaultPath("") == "/")
        #expect(CookieMatching.defaultPath("a/b") == "/")
        #expect(CookieMatching.canonicalHost("WWW.Example.COM.") == "www.example.com")
        #expect(CookieMatching.canonicalHost("[::1]") == "::1")
        #expect(CookieMatching.canonicalHost("bücher.example") == "xn--bcher-kva.example")
    }

    // MARK: - Storage model

    @Test func aDomainOnAPublicSuffixIsRejectedUnlessItIsTheHost() {
        var store = CookieStore(limits: .init())
        #expect(Self.store(&store, Self.target("www.example.com"), "a=1; Domain=com") == [.rejected(.publicSuffixDomain)])
        #expect(Self.store(&store, Self.target("www.example.co.uk"), "a=1; Domain=.co.uk") == [.rejected(.publicSuffixDomain)])
        #expect(Self.store(&store, Self.target("x.github.io"), "a=1; Domain=github.io") == [.rejected(.publicSuffixDomain)])
        #expect(Self.store(&store, Self.target("www.example.co.uk"), "a=1; Domain=other.co.uk") == [.rejected(.domainMismatch)])
        // The host itself being a public suffix: a host-only cookie.
        guard case .stored(let own) = Self.store(&store, Self.target("github.io"), "b=1; Domain=github.io").first else {
            Issue.record("not stored")
            return
        }
        #expect(own.isHostOnly && own.domain == "github.io")
        // A registrable domain is a domain cookie for its subdomains.
        guard case .stored(let shared) = Self.store(&store, Self.target("www.example.co.uk"), "c=1; Domain=example.co.uk").first
        else {
            Issue.record("not stored")
            return
        }
        #expect(!shared.isHostOnly && shared.domain == "example.co.uk")
        #expect(Self.header(&store, Self.target("api.example.co.uk")) == "c=1")
        #expect(Self.header(&store, Self.target("other.co.uk")) == nil)
        #expect(Self.header(&store, Self.target("sub.github.io")) == nil)
    }

    @Test func anIPAddressHostGetsOnlyHostOnlyCookies() {
        var store = CookieStore(limits: .init())
        let host = Self.target("10.1.2.3")
        #expect(Self.store(&store, host, "a=1; Domain=2.3") == [.rejected(.domainMismatch)])
        #expect(Self.store(&store, host, "a=1; Domain=1.2.3") == [.rejected(.domainMismatch)])
        guard case .stored(let same) = Self.store(&store, host, "b=1; Domain=10.1.2.3").first else {
            Issue.record("not stored")
            return
        }
        #expect(same.isHostOnly)
        #expect(Self.header(&store, Self.target("10.1.2.3")) == "b=1")
        #expect(Self.header(&store, Self.target("9.10.1.2.3")) == nil)
        var v6 = CookieStore(limits: .init())
        _ = Self.store(&v6, Self.target("::1"), "c=1")
        #expect(Self.header(&v6, Self.target("::1")) == "c=1")
    }

    @Test func secureCookiesStayOnHTTPS() {
        var store = CookieStore(limits: .init())
        #expect(Self.store(&store, Self.target("example.com"), "a=1; Secure") == [.rejected(.secureFromInsecureOrigin)])
        _ = Self.store(&store, Self.target("example.com", secure: true), "s=1; Secure", "p=1")
        #expect(Self.header(&store, Self.target("example.com", secure: true)) == "s=1; p=1")
        #expect(Self.header(&store, Self.target("example.com")) == "p=1")
        // http may not overwrite or shadow it (also from a subdomain or a deeper path)…
        #expect(Self.store(&store, Self.target("example.com"), "s=evil") == [.rejected(.shadowsSecureCookie)])
        #expect(Self.store(&store, Self.target("www.example.com", "/a/b"), "s=evil; Domain=example.com; Path=/a")
            == [.rejected(.shadowsSecureCookie)])
        // …but https may.
        guard case .stored = Self.store(&store, Self.target("example.com", secure: true), "s=2").first else {
            Issue.record("not stored")
            return
        }
        // The replacement keeps the original's creation time, so its place in the header.
        #expect(Self.header(&store, Self.target("example.com")) == "s=2; p=1")
    }

    @Test func prefixesNeedWhatTheyPromise() {
        var store = CookieStore(limits: .init())
        let https = Self.target("www.example.com", "/app/page", secure: true)
        #expect(Self.store(&store, https, "__Secure-a=1") == [.rejected(.prefixRequirementsNotMet)])
        #expect(Self.store(&store, https, "__secure-a=1") == [.rejected(.prefixRequirementsNotMet)])
        #expect(Self.store(&store, https, "__Host-a=1; Secure") == [.rejected(.prefixRequirementsNotMet)])  // path /app
        #expect(Self.store(&store, https, "__Host-a=1; Secure; Path=/; Domain=example.com")
            == [.rejected(.prefixRequirementsNotMet)])
        #expect(Self.store(&store, https, "=__Host-a=1; Secure; Path=/") == [.rejected(.prefixRequirementsNotMet)])
        #expect(Self.store(&store, Self.target("www.example.com"), "__Host-a=1; Path=/") == [.rejected(.prefixRequirementsNotMet)])
        let accepted = Self.store(&store, https, "__Secure-a=1; Secure; Domain=example.com", "__Host-b=1; Secure; Path=/")
        #expect(accepted.allSatisfy { if case .stored = $0 { true } else { false } })
    }

    @Test func maxAgeAndExpiresFollowTheClock() {
        var store = CookieStore(limits: .init())
        let host = Self.target("example.com")
        let now = Self.now
        _ = Self.store(&store, host, at: now, "kept=1; Max-Age=3600", "dated=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT")
        _ = Self.store(&store, host, at: now, "wins=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=60")
        #expect(store.cookies.first { $0.name == "kept" }?.expiresDate == now.addingTimeInterval(3600))
        // Lifetimes are capped at 400 days.
        #expect(store.cookies.first { $0.name == "dated" }?.expiresDate == now.addingTimeInterval(400 * 86_400))
        #expect(Self.header(&store, host, at: now.addingTimeInterval(59)) == "kept=1; dated=1; wins=1")
        #expect(Self.header(&store, host, at: now.addingTimeInterval(3599)) == "kept=1; dated=1")
        #expect(Self.header(&store, host, at: now.addingTimeInterval(3600)) == "dated=1")
        #expect(store.cookies.map(\.name) == ["dated"])
    }

    @Test func maxAgeZeroAndPastExpiresDelete() {
        var store = CookieStore(limits: .init())
        let host = Self.target("example.com")
        _ = Self.store(&store, host, "a=1", "b=1", "c=1")
        let outcomes = Self.store(
            &store, host, "a=; Max-Age=0", "b=; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "c=2; Max-Age=-1", "never=1; Max-Age=0")
        #expect(outcomes.map { if case .removed(let gone) = $0 { gone.map(\.name) } else { ["?"] } } == [["a"], ["b"], ["c"], []])
        #expect(store.cookies.isEmpty)
    }

    @Test func replacingKeepsCreationTimeAndHeaderOrderIsPathThenAge() {
        var store = CookieStore(limits: .init())
        let host = Self.target("example.com", "/a/b/page")
        let t0 = Self.now
        _ = Self.store(&store, host, at: t0, "first=1; Path=/")
        _ = Self.store(&store, host, at: t0.addingTimeInterval(1), "deep=1")  // default path /a/b
        _ = Self.store(&store, host, at: t0.addingTimeInterval(2), "second=1; Path=/")
        _ = Self.store(&store, host, at: t0.addingTimeInterval(3), "first=2; Path=/")
        #expect(Self.header(&store, host, at: t0.addingTimeInterval(4)) == "deep=1; first=2; second=1")
        #expect(store.cookies.first { $0.name == "first" }?.creationDate == t0)
        #expect(Self.header(&store, Self.target("example.com", "/a/bc")) == "first=2; second=1")
        // Different paths are different cookies.
        _ = Self.store(&store, host, at: t0.addingTimeInterval(5), "first=3; Path=/a")
        #expect(Self.header(&store, host, at: t0.addingTimeInterval(6)) == "deep=1; first=3; first=2; second=1")
    }

    @Test func limitsEvictTheLeastRecentlyUsed() {
        var limits = HTTPCookieJar.Limits()
        limits.maximumCookiesPerDomain = 3
        limits.maximumCookies = 4
        var store = CookieStore(limits: limits)
        let a = Self.target("a.example"), b = Self.target("b.example")
        for index in 0..<3 {
            _ = Self.store(&store, a, at: Self.now.addingTimeInterval(Double(index)), "a\(index)=1; Path=\(index == 0 ? "/y" : "/x")")
        }
        // Sending a0 makes a1 the least recently used.
        #expect(CookieStore.headerValue(store.cookies(for: Self.target("a.example", "/y"), now: Self.now.addingTimeInterval(10))) == "a0=1")
        _ = Self.store(&store, a, at: Self.now.addingTimeInterval(11), "a3=1")
        #expect(store.cookies.map(\.name).sorted() == ["a0", "a2", "a3"])
        _ = Self.store(&store, b, at: Self.now.addingTimeInterval(12), "b0=1", "b1=1")
        #expect(store.cookies.count == 4)
        #expect(!store.cookies.contains { $0.name == "a2" })
    }

    @Test func theJarUsesItsClock() throws {
        let clock = CookieTestClock(Self.now)
        let jar = HTTPCookieJar(clock: { clock.now })
        let url = try #require(URL(string: "http://www.example.com/"))
        jar.storeCookies(fromSetCookieFields: ["kept=1; Max-Age=3600", "session=1", "gone=1; Domain=com"], for: url)
        #expect(jar.cookieHeader(for: url) == "kept=1; session=1")
        clock.now = Self.now.addingTimeInterval(3601)
        #expect(jar.cookieHeader(for: url) == "session=1")
        #expect(jar.allCookies.map(\.name) == ["session"])
        jar.removeAll()
        #expect(jar.cookieHeader(for: url) == nil)
    }
}

/// A settable clock for cookie expiry.
final class CookieTestClock: Sendable {
    private let value: Mutex<Date>
    init(_ start: Date) { value = Mutex(start) }
    var now: Date {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
