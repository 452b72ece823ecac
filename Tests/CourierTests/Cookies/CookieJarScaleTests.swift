@testable import Courier
import Foundation
import Testing

/// A jar holding thousands of cookies: the indexed store keeps exactly the cookies the plain
/// RFC 6265bis rules keep (checked against ``ReferenceCookieStore``, a linear scan of one
/// array, operation by operation), and evicts and finds the right ones at the default caps.
@Suite("Cookie jar at scale")
struct CookieJarScaleTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// SplitMix64: the same operations on every run.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("random stores, replacements, deletions, expiries and lookups agree with the plain rules")
    func indexedStoreAgreesWithThePlainRules() {
        var limits = HTTPCookieJar.Limits()
        limits.maximumCookiesPerDomain = 40
        limits.maximumCookies = 300
        var store = CookieStore(limits: limits)
        var reference = ReferenceCookieStore(limits: limits)
        var random = SeededGenerator(state: 42)
        let hosts = [
            "example.com", "a.example.com", "b.a.example.com", "other.org", "x.other.org", "site.net", "10.0.0.1",
            "shop.example.co.uk", "example.co.uk", "api.site.net", "deep.x.other.org", "solo.test",
        ]
        let paths = ["/", "/a", "/a/b", "/c", "/a/b/c/d"]
        var now = Self.start
        for step in 0..<6_000 {
            now = now.addingTimeInterval(Double(Int.random(in: 0...2, using: &random)))  // equal times too
            let host = hosts[Int.random(in: 0..<hosts.count, using: &random)]
            let path = paths[Int.random(in: 0..<paths.count, using: &random)]
            let secure = Bool.random(using: &random)
            let target = CookieRequestTarget(host: host, path: path, isSecure: secure)
            if Int.random(in: 0..<4, using: &random) == 0 {
                let got = store.cookies(for: target, now: now)
                let expected = reference.cookies(for: target, now: now)
                #expect(got == expected, "lookup \(step) for \(host)\(path)")
                continue
            }
            var field = "n\(Int.random(in: 0..<60, using: &random))=v\(step)"
            if Bool.random(using: &random) { field += "; Path=\(paths[Int.random(in: 0..<paths.count, using: &random)])" }
            let labels = host.split(separator: ".")
            if labels.count > 2, Bool.random(using: &random) { field += "; Domain=\(labels.dropFirst().joined(separator: "."))" }
            if secure, Int.random(in: 0..<3, using: &random) == 0 { field += "; Secure" }
            switch Int.random(in: 0..<6, using: &random) {
            case 0: field += "; Max-Age=\(Int.random(in: 1...40, using: &random))"
            case 1: field += "; Max-Age=0"  // deletes
            case 2: field += "; Max-Age=\(Int.random(in: 100...100_000, using: &random))"
            default: break  // a session cookie
            }
            let got = store.store(field, from: target, now: now, publicSuffixes: .shipped)
            let expected = reference.store(field, from: target, now: now, publicSuffixes: .shipped)
            #expect(got == expected, "store \(step): \(field) from \(host)")
            if step % 100 == 0 {
                #expect(store.cookies == reference.cookies, "the jars differ after step \(step)")
            }
        }
        #expect(store.cookies == reference.cookies)
        #expect(store.cookies.count > 100, "the run filled the jar")
    }

    @Test("20 hosts × 500 cookies at the default caps: each host keeps its newest 180, the jar its newest 3,000")
    func floodKeepsTheNewestCookies() throws {
        let clock = CookieTestClock(Self.start)
        let jar = HTTPCookieJar(clock: { clock.now })
        for host in 0..<20 {
            let url = try #require(URL(string: "http://host\(host).example/"))
            for index in 0..<500 {
                clock.now = clock.now.addingTimeInterval(1)
                jar.storeCookies(fromSetCookieFields: ["c\(index)=\(host)-\(index)"], for: url)
            }
        }
        let all = jar.allCookies
        #expect(all.count == 3_000)
        // Hosts 4…19 keep their newest 180 (320…499); host 3 the newest 120 of those; 0…2 none.
        for host in 0..<20 {
            let url = try #require(URL(string: "http://host\(host).example/"))
            let names = jar.cookies(for: url).map(\.name)
            let kept = host >= 4 ? 180 : host == 3 ? 120 : 0
            #expect(names.count == kept, "host\(host)")
            #expect(Set(names) == Set((500 - kept..<500).map { "c\($0)" }), "host\(host)")
        }
        // Storage order is kept: the oldest surviving cookie first.
        #expect(all.first?.value == "3-380")
        #expect(all.last?.value == "19-499")
    }

    @Test("a cookie sent recently survives a flood that evicts the older one beside it")
    func recentlyUsedCookieSurvives() throws {
        let clock = CookieTestClock(Self.start)
        let jar = HTTPCookieJar(clock: { clock.now })
        let site = try #require(URL(string: "http://fav.example/"))
        jar.storeCookies(fromSetCookieFields: ["keep=1; Path=/k", "old=1; Path=/o"], for: site)
        let keepURL = try #require(URL(string: "http://fav.example/k"))
        let oldURL = try #require(URL(string: "http://fav.example/o"))
        for round in 0..<10 {
            for host in 0..<20 {
                let url = try #require(URL(string: "http://flood\(host).example/"))
                clock.now = clock.now.addingTimeInterval(1)
                jar.storeCookies(fromSetCookieFields: (0..<100).map { "r\(round)c\($0)=1" }, for: url)
            }
            clock.now = clock.now.addingTimeInterval(1)
            #expect(jar.cookieHeader(for: keepURL) == "keep=1", "round \(round)")  // sent: recent again
        }
        #expect(jar.allCookies.count == 3_000)
        #expect(jar.cookieHeader(for: oldURL) == nil, "the least recently used cookie went")
        #expect(jar.cookieHeader(for: keepURL) == "keep=1")
    }
}
