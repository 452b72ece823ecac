@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1
import Testing

/// RFC 9111's private-cache rules with plain values: Cache-Control parsing, storability,
/// freshness, Vary, validation, 304 merging, invalidation and the cache-policy decision.
@Suite("HTTP cache rules")
struct HTTPCacheRuleTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func entry(
        status: Int = 200, _ headers: HTTPHeaders, receivedSecondsAgo: Double = 0, varied: [String: String?] = [:]
    ) -> CacheEntry {
        var entry = CacheEntry(
            key: "http://example.com/a", status: status, reason: "OK", headerFields: [], varied: varied,
            requestTime: now.addingTimeInterval(-receivedSecondsAgo), responseTime: now.addingTimeInterval(-receivedSecondsAgo),
            bodyLength: 0, bodyID: "")
        entry.headers = headers
        return entry
    }

    static func date(_ secondsFromNow: Double) -> String { CacheEndpoints.httpDate(now.addingTimeInterval(secondsFromNow)) }

    // MARK: Cache-Control

    @Test func cacheControlParsesDirectives() {
        let control = CacheControl(["max-age=60, No-Cache=\"Set-Cookie, X\"", "private, max-age=5, must-revalidate"])
        #expect(control.maxAge == 60)  // first wins
        #expect(control.noCache && control.isPrivate && control.mustRevalidate)
        #expect(!control.noStore)
        #expect(CacheControl(["max-age=abc"]).maxAge == 0)  // malformed: stale at once
        #expect(CacheControl(["max-age=-5"]).maxAge == 0)
        #expect(CacheControl(["max-age=99999999999999999999"]).maxAge == CacheControl.deltaSecondsCap)
        #expect(CacheControl(["max-stale"]).maxStale == .some(nil))
        #expect(CacheControl(["max-stale=30"]).maxStale == .some(30))
        #expect(CacheControl(["only-if-cached, min-fresh=10"]).onlyIfCached)
        #expect(CacheControl([]).maxAge == nil)
    }

    @Test func hostileFreshnessFieldsReadConservatively() {
        // Cache-Control: quoted, conflicting, junk after the digits, non-ASCII digits, empty.
        #expect(CacheControl(["max-age=\"60\""]).maxAge == 60)
        #expect(CacheControl(["max-age=60", "max-age=0"]).maxAge == 60)  // first wins (RFC 9111 §4.2.1)
        #expect(CacheControl(["max-age=60=1"]).maxAge == 0)
        #expect(CacheControl(["max-age=1e9"]).maxAge == 0)
        #expect(CacheControl(["max-age=\u{0666}\u{0660}"]).maxAge == 0)
        #expect(CacheControl(["max-age="]).maxAge == 0)
        #expect(CacheControl(["max-age=2147483649"]).maxAge == CacheControl.deltaSecondsCap)
        #expect(CacheControl(["max-age=\"" + String(repeating: "9", count: 10_000) + "\""]).maxAge == CacheControl.deltaSecondsCap)
        #expect(CacheControl(["no-store=\"a,b\", max-age=\"1,2\""]).noStore)
        // Age: huge is just old; negative or not a number is ignored.
        #expect(!CacheFreshness.isFresh(Self.entry(["Cache-Control": "max-age=2147483648", "Age": "99999999999999999999"]), now: Self.now))
        #expect(CacheFreshness.currentAge(of: Self.entry(["Age": "-5"]), now: Self.now) == 0)
        #expect(CacheFreshness.currentAge(of: Self.entry(["Age": "1e9"]), now: Self.now) == 0)
        // Dates out of range: no date, so Expires means stale and Date falls back to receipt.
        #expect(CacheFreshness.lifetime(of: Self.entry(["Expires": "Thu, 01 Jan 1600 00:00:00 GMT"])) == 0)
        #expect(CacheFreshness.lifetime(of: Self.entry(["Expires": "Thu, 01 Jan 99999 00:00:00 GMT"])) == 0)
        #expect(CacheFreshness.lifetime(of: Self.entry(["Date": "Fri, 31 Dec 9999 23:59:59 GMT", "Expires": Self.date(60)])) == 0)
        let farFuture = CacheFreshness.lifetime(of: Self.entry(["Date": Self.date(0), "Expires": "Fri, 31 Dec 9999 23:59:59 GMT"]))
        #expect(farFuture.isFinite && farFuture > 0)
        // Vary naming hundreds of fields: a key with all of them, matched only by the same values.
        let names = (0..<500).map { "X-H\($0)" }
        let vary = HTTPHeaders([("Vary", names.joined(separator: ", "))])
        let request = HTTPHeaders(names.map { ($0, "v") })
        let key = CacheVary.secondaryKey(responseHeaders: vary, requestHeaders: request)
        #expect(key.count == 502)  // and Authorization and Cookie (absent): not a public response
        #expect(CacheVary.matches(key, requestHeaders: request))
        #expect(!CacheVary.matches(key, requestHeaders: [:]))
    }

    /// Delta-seconds may have leading zeros (RFC 9111 §1.2.2: 1*DIGIT): they don't change the
    /// value. `max-age=00000000000` is 0 (stale at once), not the 2^31 cap, and an `Age` padded
    /// past ten characters still counts in full.
    @Test func leadingZerosDoNotChangeADeltaSecondsValue() {
        #expect(CacheControl(["max-age=00000000000"]).maxAge == 0)
        #expect(CacheControl(["max-age=000000000060"]).maxAge == 60)
        #expect(CacheControl(["max-age=" + String(repeating: "0", count: 10_000) + "7"]).maxAge == 7)
        #expect(CacheControl(["max-age=000000000002147483649"]).maxAge == CacheControl.deltaSecondsCap)
        #expect(CacheControl(["min-fresh=000000000000"]).minFresh == 0)
        #expect(CacheControl(["max-stale=00000000000030"]).maxStale == .some(30))
        // A caller asking for max-age=0 (padded) revalidates a stored response; it isn't served.
        let stored = Self.entry(["Cache-Control": "max-age=600", "ETag": "\"v1\""], receivedSecondsAgo: 10)
        #expect(
            CacheLookupRule.decide(
                policy: .useProtocolCachePolicy, requestHeaders: ["Cache-Control": "max-age=00000000000"], entry: stored, now: Self.now)
                == .validate(["If-None-Match": "\"v1\""]))
        // Age: 00000000001000000 is 1,000,000 s old, far past a max-age of a day.
        #expect(CacheFreshness.currentAge(of: Self.entry(["Age": "00000000001000000"]), now: Self.now) == 1_000_000)
        #expect(!CacheFreshness.isFresh(Self.entry(["Cache-Control": "max-age=86400", "Age": "00000000001000000"]), now: Self.now))
        #expect(CacheFreshness.currentAge(of: Self.entry(["Age": String(repeating: "0", count: 50)]), now: Self.now) == 0)
    }

    @Test func httpDatesRoundTrip() {
        #expect(HTTPDate.parse(CacheEndpoints.httpDate(Date(timeIntervalSince1970: 784_111_777))) == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("0") == nil)
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
    }

    // MARK: Storability

    @Test func storability() {
        func storable(method: String = "GET", request: HTTPHeaders = [:], status: Int = 200, _ response: HTTPHeaders) -> Bool {
            CacheStorability.isStorable(method: method, requestHeaders: request, status: status, responseHeaders: response)
        }
        #expect(storable(["Cache-Control": "max-age=60"]))
        #expect(storable([:]))  // 200 is cacheable by default (heuristics may apply)
        #expect(storable(status: 404, [:]))
        #expect(!storable(status: 201, [:]))  // not cacheable by default, no explicit freshness
        #expect(storable(status: 201, ["Cache-Control": "max-age=5"]))
        #expect(storable(["Cache-Control": "private, max-age=60"]))
        #expect(!storable(["Cache-Control": "no-store, max-age=60"]))
        #expect(!storable(request: ["Cache-Control": "no-store"], ["Cache-Control": "max-age=60"]))
        #expect(!storable(method: "POST", ["Cache-Control": "max-age=60"]))
        #expect(!storable(status: 206, ["Cache-Control": "max-age=60"]))
        #expect(!storable(request: ["Range": "bytes=0-1"], ["Cache-Control": "max-age=60"]))
        #expect(!storable(["Cache-Control": "max-age=60", "Vary": "*"]))
        #expect(!storable(request: ["Authorization": "Basic eDp5"], ["Cache-Control": "max-age=60"]))
        #expect(storable(request: ["Authorization": "Basic eDp5"], ["Cache-Control": "public, max-age=60"]))
        #expect(storable(request: ["Authorization": "Basic eDp5"], ["Cache-Control": "max-age=60, must-revalidate"]))
        // Challenges depend on the credentials sent: never stored, whatever their freshness.
        #expect(!storable(status: 401, ["Cache-Control": "public, max-age=60"]))
        #expect(!storable(status: 407, ["Cache-Control": "max-age=60", "Expires": "Thu, 01 Jan 2099 00:00:00 GMT"]))
    }

    // MARK: Freshness

    @Test func freshnessFromMaxAgeExpiresAndHeuristics() {
        #expect(CacheFreshness.lifetime(of: Self.entry(["Cache-Control": "max-age=60", "Expires": Self.date(999)])) == 60)
        #expect(CacheFreshness.lifetime(of: Self.entry(["Date": Self.date(0), "Expires": Self.date(100)])) == 100)
        #expect(CacheFreshness.lifetime(of: Self.entry(["Date": Self.date(0), "Expires": "0"])) == 0)  // invalid: stale
        // 10 % of the Last-Modified age, for a status cacheable by default only.
        let heuristic = Self.entry(["Date": Self.date(0), "Last-Modified": Self.date(-1000)])
        #expect(CacheFreshness.lifetime(of: heuristic) == 100)
        #expect(CacheFreshness.lifetime(of: Self.entry(status: 201, ["Last-Modified": Self.date(-1000)])) == 0)
        #expect(CacheFreshness.lifetime(of: Self.entry([:])) == 0)
    }

    @Test func currentAgeCountsAgeDateAndResidentTime() {
        // Received 30 s ago with Age: 10 and a Date 5 s before receipt.
        let entry = Self.entry(["Age": "10", "Date": Self.date(-35)], receivedSecondsAgo: 30)
        #expect(CacheFreshness.currentAge(of: entry, now: Self.now) == 40)
        #expect(CacheFreshness.isFresh(Self.entry(["Cache-Control": "max-age=60"], receivedSecondsAgo: 59), now: Self.now))
        #expect(!CacheFreshness.isFresh(Self.entry(["Cache-Control": "max-age=60"], receivedSecondsAgo: 61), now: Self.now))
        #expect(!CacheFreshness.isFresh(Self.entry(["Cache-Control": "max-age=60", "Age": "100"]), now: Self.now))
    }

    // MARK: Vary

    @Test func varyKeepsVariantsApart() {
        let response: HTTPHeaders = ["Vary": "Accept-Language, X-Flavor"]
        let key = CacheVary.secondaryKey(responseHeaders: response, requestHeaders: ["Accept-Language": "en  ,fr"])
        // Authorization and Cookie too, absent here: the response is not public (see
        // credentialsKeepVariantsApart, HTTPCacheCookieTests).
        let expected: [String: String?] = [
            "accept-language": "sha256:1692d4288843683ae24cdcb23a05c0723bcbaf403b1eec3211cf8ce1b6618445",  // of `en, fr`
            "x-flavor": String?.none, "authorization": String?.none, "cookie": String?.none,
        ]
        #expect(key == expected)
        #expect(CacheVary.matches(key, requestHeaders: ["accept-language": "en, fr"]))
        #expect(!CacheVary.matches(key, requestHeaders: ["Accept-Language": "de"]))
        #expect(!CacheVary.matches(key, requestHeaders: ["Accept-Language": "en, fr", "X-Flavor": "a"]))
        #expect(CacheVary.matches([:], requestHeaders: ["Anything": "x"]))
    }

    @Test func credentialsKeepVariantsApart() {
        let alice: HTTPHeaders = ["Authorization": "Bearer alice", "Cookie": "s=a"]
        let key = CacheVary.secondaryKey(responseHeaders: ["Cache-Control": "max-age=60, must-revalidate", "Vary": "Cookie"], requestHeaders: alice)
        #expect(CacheVary.matches(key, requestHeaders: alice))
        #expect(!CacheVary.matches(key, requestHeaders: ["Authorization": "Bearer bob", "Cookie": "s=a"]))
        #expect(!CacheVary.matches(key, requestHeaders: ["Cookie": "s=a"]))
        #expect(!key.values.contains { $0?.contains("alice") == true || $0?.contains("s=a") == true })  // digests only
        // A response to no credentials isn't served to a request with some; public ones are.
        let anonymous = CacheVary.secondaryKey(responseHeaders: ["Cache-Control": "max-age=60"], requestHeaders: [:])
        #expect(!CacheVary.matches(anonymous, requestHeaders: alice))
        #expect(CacheVary.matches(anonymous, requestHeaders: ["Accept": "*/*"]))
        let shared = CacheVary.secondaryKey(responseHeaders: ["Cache-Control": "public, max-age=60"], requestHeaders: alice)
        #expect(shared.isEmpty && CacheVary.matches(shared, requestHeaders: [:]))
    }

    /// `public` beside `private` (conflicting directives: the more restrictive one holds, RFC
    /// 9111 §4.2.1) does not share a response to one user's credentials with another: stored
    /// (`public` makes a response to Authorization storable), it stays that user's.
    @Test func aResponseBothPublicAndPrivateIsNotShared() {
        let alice: HTTPHeaders = ["Authorization": "Bearer alice"]
        for control in ["public, private, max-age=60", "private=\"set-cookie\", public, max-age=60", "PRIVATE, Public"] {
            let key = CacheVary.secondaryKey(responseHeaders: ["Cache-Control": control], requestHeaders: alice)
            #expect(CacheVary.matches(key, requestHeaders: alice), "\(control)")
            #expect(!CacheVary.matches(key, requestHeaders: ["Authorization": "Bearer bob"]), "\(control)")
            #expect(!CacheVary.matches(key, requestHeaders: [:]), "\(control)")
        }
    }

    // MARK: Validation

    @Test func conditionalHeadersFromValidators() {
        let entry = Self.entry(["ETag": "\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
        let fields = CacheValidation.conditionalHeaders(for: entry)
        #expect(fields.map(\.name) == ["If-None-Match", "If-Modified-Since"])
        #expect(fields.map(\.value) == ["\"v1\"", "Sun, 06 Nov 1994 08:49:37 GMT"])
        #expect(CacheValidation.conditionalHeaders(for: Self.entry(["Cache-Control": "no-cache"])).isEmpty)
    }

    @Test func notModifiedMergesHeaders() {
        let stored = Self.entry(
            ["ETag": "\"v1\"", "Content-Length": "5", "X-Old": "1", "Cache-Control": "max-age=1", "Set-Cookie": "a=1"],
            receivedSecondsAgo: 100)
        let notModified: HTTPHeaders = ["ETag": "\"v1\"", "Cache-Control": "max-age=300", "Content-Length": "0", "X-New": "2"]
        #expect(CacheValidation.notModifiedMatches(stored, notModifiedHeaders: notModified))
        #expect(!CacheValidation.notModifiedMatches(stored, notModifiedHeaders: ["ETag": "\"v2\""]))
        let merged = CacheValidation.merged(stored, notModifiedHeaders: notModified, requestTime: Self.now, responseTime: Self.now)
        let headers = merged.headers
        #expect(headers["cache-control"] == ["max-age=300"])
        #expect(headers["content-length"] == ["5"])
        #expect(headers["x-old"] == ["1"] && headers["x-new"] == ["2"] && headers["set-cookie"] == ["a=1"])
        #expect(CacheFreshness.isFresh(merged, now: Self.now))
    }

    @Test func notModifiedCannotRecodeOrCutTheStoredBody() {
        // The stored body was kept as delivered (identity, whole); a 304 claiming another coding
        // or a range would make the replayed head describe bytes it doesn't carry.
        let stored = Self.entry(["ETag": "\"v1\"", "Content-Length": "5", "Content-Type": "text/plain"])
        let notModified: HTTPHeaders = [
            "ETag": "\"v1\"", "Content-Encoding": "gzip", "Content-Range": "bytes 0-1/5", "Content-Length": "99", "X-New": "2",
        ]
        let headers = CacheValidation.merged(stored, notModifiedHeaders: notModified, requestTime: Self.now, responseTime: Self.now)
            .headers
        #expect(headers["content-encoding"].isEmpty)
        #expect(headers["content-range"].isEmpty)
        #expect(headers["content-length"] == ["5"])
        #expect(headers["x-new"] == ["2"])
        // A stored coding stays as stored, whatever the 304 says.
        let coded = Self.entry(["ETag": "\"v1\"", "Content-Length": "5", "Content-Encoding": "br"])
        let recoded = CacheValidation.merged(coded, notModifiedHeaders: ["Content-Encoding": "gzip"], requestTime: Self.now, responseTime: Self.now)
        #expect(recoded.headers["content-encoding"] == ["br"])
    }

    // MARK: Invalidation

    @Test func unsafeMethodsInvalidateSameOriginTargets() {
        let url = URL(string: "http://example.com/items?x=1#frag")
        let keys = CacheInvalidation.keysToInvalidate(
            method: "POST", url: url, status: 201,
            responseHeaders: ["Location": "/items/7", "Content-Location": "http://other.example/items/7"])
        #expect(keys == ["http://example.com/items?x=1", "http://example.com/items/7"])
        #expect(CacheInvalidation.keysToInvalidate(method: "GET", url: url, status: 200, responseHeaders: [:]).isEmpty)
        #expect(CacheInvalidation.keysToInvalidate(method: "DELETE", url: url, status: 500, responseHeaders: [:]).isEmpty)
        #expect(CacheKey.key(for: URL(string: "HTTP://Example.COM:80")) == "http://example.com/")
        #expect(CacheKey.key(for: URL(string: "file:///tmp/x")) == nil)
    }

    /// The primary key is written into the disk store's metadata files: a URL's user and
    /// password (never sent: the session takes credentials from `credential`, not the URL) are
    /// not part of it, so they are not written to disk in the clear.
    @Test func aURLsUserAndPasswordAreNotPartOfTheKey() {
        #expect(CacheKey.key(for: URL(string: "http://alice:s3cret@Example.com/x?q=1")) == "http://example.com/x?q=1")
        #expect(CacheKey.key(for: URL(string: "https://alice@example.com:443/")) == "https://example.com/")
        #expect(CacheKey.key(for: URL(string: "http://:pw@example.com:8080/a")) == "http://example.com:8080/a")
        let keys = CacheInvalidation.keysToInvalidate(
            method: "PUT", url: URL(string: "http://u:p@example.com/a"), status: 204, responseHeaders: ["Location": "/b"])
        #expect(keys == ["http://example.com/a", "http://example.com/b"])
    }

    // MARK: Decisions

    @Test func protocolPolicyDecisions() {
        func decide(_ request: HTTPHeaders, _ entry: CacheEntry?, policy: URLRequest.CachePolicy = .useProtocolCachePolicy)
            -> CacheLookupRule.Decision
        {
            CacheLookupRule.decide(policy: policy, requestHeaders: request, entry: entry, now: Self.now)
        }
        let fresh = Self.entry(["Cache-Control": "max-age=60", "ETag": "\"a\""], receivedSecondsAgo: 30)
        let stale = Self.entry(["Cache-Control": "max-age=60", "ETag": "\"a\""], receivedSecondsAgo: 90)
        let staleNoValidator = Self.entry(["Cache-Control": "max-age=60"], receivedSecondsAgo: 90)
        let validate = CacheLookupRule.Decision.validate(["If-None-Match": "\"a\""])
        #expect(decide([:], nil) == .network)
        #expect(decide([:], fresh) == .serveStored)
        #expect(decide([:], stale) == validate)
        #expect(decide([:], staleNoValidator) == .network)
        #expect(decide([:], Self.entry(["Cache-Control": "no-cache, max-age=60", "ETag": "\"a\""])) == validate)
        #expect(decide(["Cache-Control": "no-cache"], fresh) == validate)
        #expect(decide(["Pragma": "no-cache"], fresh) == validate)
        #expect(decide(["Cache-Control": "max-age=10"], fresh) == validate)
        #expect(decide(["Cache-Control": "max-age=40"], fresh) == .serveStored)
        #expect(decide(["Cache-Control": "min-fresh=40"], fresh) == validate)
        #expect(decide(["Cache-Control": "max-stale=60"], stale) == .serveStored)
        #expect(decide(["Cache-Control": "max-stale"], stale) == .serveStored)
        let mustRevalidate = Self.entry(["Cache-Control": "max-age=60, must-revalidate", "ETag": "\"a\""], receivedSecondsAgo: 90)
        #expect(decide(["Cache-Control": "max-stale"], mustRevalidate) == validate)
        #expect(decide(["Cache-Control": "only-if-cached"], fresh) == .serveStored)
        #expect(decide(["Cache-Control": "only-if-cached"], stale) == .unavailable)
        #expect(decide(["Cache-Control": "only-if-cached"], nil) == .unavailable)
    }

    @Test func urlRequestCachePolicies() {
        let stale = Self.entry(["Cache-Control": "max-age=60", "ETag": "\"a\""], receivedSecondsAgo: 90)
        func decide(_ policy: URLRequest.CachePolicy, _ entry: CacheEntry?) -> CacheLookupRule.Decision {
            CacheLookupRule.decide(policy: policy, requestHeaders: [:], entry: entry, now: Self.now)
        }
        #expect(decide(.reloadIgnoringLocalCacheData, stale) == .network)
        #expect(decide(.returnCacheDataElseLoad, stale) == .serveStored)
        #expect(decide(.returnCacheDataElseLoad, nil) == .network)
        #expect(decide(.returnCacheDataDontLoad, stale) == .serveStored)
        #expect(decide(.returnCacheDataDontLoad, nil) == .unavailable)
        #expect(CacheLookupRule.participates(method: "GET", requestHeaders: [:]))
        #expect(!CacheLookupRule.participates(method: "POST", requestHeaders: [:]))
        #expect(!CacheLookupRule.participates(method: "GET", requestHeaders: ["Range": "bytes=0-"]))
        #expect(!CacheLookupRule.participates(method: "GET", requestHeaders: ["If-None-Match": "\"x\""]))
    }
}
