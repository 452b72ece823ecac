@testable import Courier
import CourierEngine
import Foundation
import Testing

/// The pure rules behind observability: what is redacted from URLs and headers, and the
/// bounded labels metrics and spans use.
@Suite("Observability redaction and labels")
struct ObservabilityRedactionTests {
    let rules = ObservabilityRedaction.default

    private func redacted(_ string: String) throws -> String {
        rules.redactedURL(try #require(URL(string: string)))
    }

    @Test func credentialsInTheURLAreReplaced() throws {
        #expect(try redacted("https://user:pw@example.com/a") == "https://REDACTED:REDACTED@example.com/a")
        #expect(try redacted("https://user@example.com:8443/a") == "https://REDACTED@example.com:8443/a")
        #expect(try redacted("http://example.com/a?b=c") == "http://example.com/a?b=c")
        #expect(try redacted("http://example.com/a#secret-fragment") == "http://example.com/a")
    }

    @Test(arguments: [
        "token", "access_token", "refresh_token", "id_token", "api_key", "API-Key", "apikey", "key", "password", "secret",
        "client_secret", "signature", "sig", "X-Amz-Signature", "X-Amz-Credential", "X-Goog-Signature", "AWSAccessKeyId",
        "x-csrf-token", "upload.key", "code",
    ])
    func sensitiveQueryParameters(_ name: String) throws {
        #expect(rules.isSensitiveQueryParameter(name))
        #expect(try redacted("https://h/p?\(name)=v4lue&page=2") == "https://h/p?\(name)=REDACTED&page=2")
    }

    /// The nested and array names Courier's own query encoding writes (`user[password]=…`,
    /// `token[]=…`), raw or percent-encoded, are secret when any part of them is.
    @Test(arguments: ["token[]", "user[password]", "auth[access_token]", "oauth[refresh-token][]", "TOKEN", "Access_Token"])
    func nestedAndArrayQueryNames(_ name: String) throws {
        #expect(rules.isSensitiveQueryParameter(name))
        let encoded = try #require(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "_-"))))
        #expect(try redacted("https://h/p?\(encoded)=v4lue&page=2") == "https://h/p?\(encoded)=REDACTED&page=2")
        #expect(rules.redactedQuery("\(name)=v4lue&page=2") == "\(name)=REDACTED&page=2")
    }

    @Test func oddURLCredentialAndFragmentShapes() throws {
        #expect(try !redacted("https://:pw@example.com/a").contains("pw"))
        #expect(try redacted("https://example.com/cb#access_token=abc&TOKEN=def") == "https://example.com/cb")
        #expect(try redacted("https://u:p@example.com/a?TOKEN=x&Api-Key=y") == "https://REDACTED:REDACTED@example.com/a?TOKEN=REDACTED&Api-Key=REDACTED")
    }

    @Test(arguments: ["page", "q", "monkey", "sort", "keyboard", "tokens_used", "id", "tokens[0]", "list[]", "[]"])
    func ordinaryQueryParameters(_ name: String) {
        #expect(!rules.isSensitiveQueryParameter(name))
    }

    /// A URL carried in an ordinary query value (`?next=…`, a redirect target, a callback)
    /// keeps its own credentials and secret parameters out of the log too: the value becomes
    /// that URL redacted (encoded as it came), or the placeholder when it can't be taken apart.
    @Test func aURLNestedInAQueryValueIsRedactedToo() throws {
        #expect(try redacted("https://h/login?next=http://u:p@other/x&page=2") == "https://h/login?next=http://REDACTED:REDACTED@other/x&page=2")
        #expect(
            try redacted("https://h/login?next=http%3A%2F%2Fu%3Ap%40other%2Fx%3Ftoken%3Dabc&page=2")
                == "https://h/login?next=http%3A%2F%2FREDACTED%3AREDACTED%40other%2Fx%3Ftoken%3DREDACTED&page=2")
        #expect(rules.redactedQuery("cb=https://other/y?api_key=k1") == "cb=https://other/y?api_key=REDACTED")
        // Not one URL with a host as written: hidden whole.
        #expect(rules.redactedQuery("next=[http://u:p@h/]&page=2") == "next=REDACTED&page=2")
        // A value without a URL in it stays as it was.
        #expect(rules.redactedQuery("next=%2Fhome&q=a%3A%2F%2F") == "next=%2Fhome&q=a%3A%2F%2F")
    }

    /// A nested URL without credentials is kept exactly as it came, whatever its own escapes
    /// (`%20`, UTF-8); one whose credentials show only when the value is decoded, one encoded
    /// twice (a redirect target passed on again) or one written without a scheme (`//u:p@h`)
    /// still loses them; and one nested deeper than the bound is hidden whole, even when its
    /// credentials are escaped once more.
    @Test func nestedURLsHostileShapes() {
        // Nothing to hide: unchanged (not re-encoded, not double-escaped).
        #expect(rules.redactedQuery("next=http://h/?x=%20&y=1") == "next=http://h/?x=%20&y=1")
        #expect(rules.redactedQuery("next=http://h/%E2%82%AC") == "next=http://h/%E2%82%AC")
        #expect(rules.redactedQuery("next=http%3A%2F%2Fh%2F%E2%82%AC") == "next=http%3A%2F%2Fh%2F%E2%82%AC")
        // Credentials next to an escape: hidden, the value shown as its reader decodes it,
        // encoded once again.
        #expect(rules.redactedQuery("next=http://u:p@h/?x=%20") == "next=http%3A%2F%2FREDACTED%3AREDACTED%40h%2F%3Fx%3D%2520")
        // What shows only once the value is decoded (as its reader does) is hidden too.
        #expect(rules.redactedQuery("next=http://u%3Ap%40h/") == "next=http%3A%2F%2FREDACTED%3AREDACTED%40h%2F")
        #expect(rules.redactedQuery("next=http://h/%3Ftoken=t") == "next=http%3A%2F%2Fh%2F%3Ftoken%3DREDACTED")
        // A user as written that decoding turns into a path: hidden whole.
        #expect(rules.redactedQuery("next=http://h%2F@x/") == "next=REDACTED")
        // Encoded twice: redacted, encoded twice again.
        #expect(
            rules.redactedQuery("next=http%253A%252F%252Fu%253Ap%2540h%252F")
                == "next=http%253A%252F%252FREDACTED%253AREDACTED%2540h%252F")
        // An encoded scheme, a user alone, a scheme-relative URL.
        #expect(rules.redactedQuery("next=%68ttp://u:p@h") == "next=http%3A%2F%2FREDACTED%3AREDACTED%40h")
        #expect(rules.redactedQuery("next=https://u@h") == "next=https://REDACTED@h")
        #expect(rules.redactedQuery("next=//u:p@h/x") == "next=//REDACTED:REDACTED@h/x")
        #expect(rules.redactedQuery("next=%2F%2Fu%3Ap%40h%2Fx") == "next=%2F%2FREDACTED%3AREDACTED%40h%2Fx")
        // Beyond the nesting bound, credentials escaped once more than the levels: hidden whole.
        let deep = "next=http://h/?n=http://h/?n=http://h/?n=http://h/?n=http://h/?n=http%253A%252F%252Fu%253Ap%2540h"
        #expect(!rules.redactedQuery(deep).contains("u%"), "\(rules.redactedQuery(deep))")
        #expect(!rules.redactedQuery(deep).contains("u:p"), "\(rules.redactedQuery(deep))")
    }

    /// A query part that is a URL itself, with no name (`?https://u:p@t/`, as some redirectors
    /// take their target), is redacted as one value, also when its own query has an `=`.
    @Test func aQueryThatIsAURLIsRedacted() throws {
        #expect(try redacted("https://r.example/?https://u:p@t/?a=b") == "https://r.example/?https://REDACTED:REDACTED@t/?a=b")
        #expect(rules.redactedQuery("http://u:p@h/") == "http://REDACTED:REDACTED@h/")
        #expect(rules.redactedQuery("https%3A%2F%2Fu%3Ap%40t%2F%3Fa%3Db") == "https%3A%2F%2FREDACTED%3AREDACTED%40t%2F%3Fa%3Db")
        #expect(rules.redactedQuery("x=1&https://u@t/?token=z&y=2") == "x=1&https://REDACTED@t/?token=REDACTED&y=2")
        // Names and flags that hold no URL are kept.
        #expect(rules.redactedQuery("flag&a=1&http=2") == "flag&a=1&http=2")
    }

    /// A value a browser reads as a URL with credentials though it lacks `//` (WHATWG URL's
    /// special schemes take an authority after `http:/` or `https:\\` too) is hidden whole;
    /// one without `@` is kept.
    @Test func specialSchemeValuesWithoutSlashesAreHidden() {
        #expect(rules.redactedQuery("next=http:/u:p@h/x&page=2") == "next=REDACTED&page=2")
        #expect(rules.redactedQuery("next=HTTPS:\\\\u:p@h") == "next=REDACTED")
        #expect(rules.redactedQuery("next=http:u:p@h") == "next=REDACTED")
        #expect(rules.redactedQuery("next=http%3A%2Fu%3Ap%40h") == "next=REDACTED")
        #expect(rules.redactedQuery("next=http:foo&to=mailto:a@b") == "next=http:foo&to=mailto:a@b")
    }

    @Test("a value a browser reads as a URL with credentials after its URL parser's clean-up (leading space, tab, backslashes) is hidden")
    func valuesABrowserCleansIntoAURLAreHidden() {
        // WHATWG URL strips leading C0 controls and spaces, drops tabs and newlines anywhere,
        // and reads \\ as // for special schemes and scheme-relative targets.
        #expect(rules.redactedQuery("next=%20http:u:p@h/&page=2") == "next=REDACTED&page=2")
        #expect(rules.redactedQuery("next=h%09ttp:/u:p@h/") == "next=REDACTED")
        #expect(rules.redactedQuery("next=%5C%5Cu:p@h/") == "next=REDACTED")
        #expect(rules.redactedQuery("next=/%5Cu:p@h/") == "next=REDACTED")
        #expect(rules.redactedQuery("next=%0A//u:p@h/") == "next=REDACTED")
        // A sensitive parameter of such a URL (no credentials in it): hidden too, whole.
        #expect(rules.redactedQuery("next=%5C%5Ch/?token=t") == "next=REDACTED")
        #expect(rules.redactedQuery("next=%20http://h/?token=t") == "next=REDACTED")
        #expect(rules.redactedQuery("next=%5C%5Ch/?page=2") == "next=%5C%5Ch/?page=2")  // nothing to hide: kept
        #expect(rules.redactedQuery("next=/path/a@b&to=%5Cdocs") == "next=/path/a@b&to=%5Cdocs")  // nothing URL-like: kept
    }

    @Test("a URL a browser reads past extra slashes (////h/, http:///h/) is read the same way: its secrets are hidden")
    func extraSlashesBeforeTheHostHideNothing() {
        // WHATWG URL ignores any number of slashes (and backslashes) before a special
        // scheme's or a scheme-relative URL's host; Foundation finds no host there.
        #expect(rules.redactedQuery("next=////h/?token=t") == "next=REDACTED")
        #expect(rules.redactedQuery("next=http:///h/?token=t&page=2") == "next=REDACTED&page=2")
        #expect(rules.redactedQuery("next=https:////u:p@h/") == "next=REDACTED")
        #expect(rules.redactedQuery("next=%2F%2F%2Fh%2F%3Ftoken%3Dt") == "next=REDACTED")
        #expect(rules.redactedQuery("next=////h/?page=2") == "next=////h/?page=2")  // nothing to hide: kept
    }

    @Test("a sensitive name after a ; separator (read as & by many servers) is hidden too, ; kept")
    func semicolonSeparatedQueryPartsAreRedacted() {
        #expect(rules.redactedQuery("a=1;token=secret") == "a=1;token=REDACTED")
        #expect(rules.redactedQuery("a=1;b=2&c=3;api_key=k") == "a=1;b=2&c=3;api_key=REDACTED")
        #expect(rules.redactedQuery("a=1;next=http://h/") == "a=1;next=http://h/")
        #expect(rules.redactedQuery("a=1;next=http://h/?token=t") == "a=1;next=http://h/?token=REDACTED")
        // A ; inside a nested URL's user does not cut the URL apart: still hidden.
        #expect(rules.redactedQuery("next=http://u;a:p@h/") == "next=http://REDACTED:REDACTED@h/")
        // Each reading hides something the other would show: the value is hidden whole.
        #expect(rules.redactedQuery("next=http://u:p@h/;token=x") == "next=REDACTED")
        #expect(rules.redactedQuery("http://u:p@h/;token=x") == "REDACTED")
    }

    @Test func queryShapeIsKept() {
        #expect(rules.redactedQuery("a=1&token=x&&flag&token=y&b=%20") == "a=1&token=REDACTED&&flag&token=REDACTED&b=%20")
        #expect(rules.redactedQuery("%74oken=x") == "%74oken=REDACTED")  // a percent-encoded name is still a token
    }

    @Test func urlsInAMessageAreRedacted() {
        #expect(rules.redactedMessage("no url here") == "no url here")
        #expect(rules.redactedMessage("The body of https://u:p@h/a?token=t&x=1 is large") == "The body of https://REDACTED:REDACTED@h/a?token=REDACTED&x=1 is large")
        #expect(rules.redactedMessage("at \"https://h/a?token=t\" end") == "at REDACTED end")  // not a URL as written: hidden whole
    }

    @Test("a word that Foundation parses as a URL without a host (the :// in its path) is hidden whole")
    func urlsParsedIntoAPathAreHiddenWhole() {
        // URL(string:) takes these, but as a relative path or another scheme: the credentials
        // and the query would stay in the path, which redactedURL keeps as written.
        #expect(rules.redactedMessage("at [http://u:p@h/?token=t] end") == "at REDACTED end")
        #expect(rules.redactedMessage("at x:http://u:p@h/ end") == "at REDACTED end")
        #expect(rules.redactedMessage("at url=http://u:p@h/ end") == "at REDACTED end")
    }

    @Test func sensitiveHeaders() {
        for name in ["Authorization", "cookie", "Proxy-Authorization", "Set-Cookie", "X-API-Key"] {
            #expect(rules.redactedHeaderValue(name: name, value: "v") == "REDACTED")
        }
        #expect(rules.redactedHeaderValue(name: "Accept", value: "text/html") == "text/html")
        // A name that isn't a token is never sent, and may be a credential header misspelled.
        for name in ["Authorization ", " Cookie", "X-Api-Key:", "Auth\tToken", "Authorization\r\n", "", "Authoriz\u{E9}"] {
            #expect(rules.isSensitiveHeader(name), "\(name)")
        }
        for name in ["Accept", "X-Request-Id", "If-None-Match", "a!#$%&'*+-.^_`|~0"] {
            #expect(!rules.isSensitiveHeader(name), "\(name)")
        }
    }

    @Test func listsCanBeChanged() {
        var custom = ObservabilityRedaction(sensitiveQueryParameters: ["ticket"], sensitiveQueryParameterSuffixes: [])
        custom.sensitiveHeaders.insert("x-tenant")
        #expect(custom.isSensitiveQueryParameter("Ticket"))
        #expect(!custom.isSensitiveQueryParameter("access_token"))
        #expect(custom.isSensitiveHeader("X-Tenant"))
    }

    @Test func labelsAreBounded() {
        #expect(ObservabilityLabels.method("GET") == "GET")
        #expect(ObservabilityLabels.method("get") == "_OTHER")
        #expect(ObservabilityLabels.method("PURGE") == "_OTHER")
        #expect(ObservabilityLabels.statusClass(204) == "2xx")
        #expect(ObservabilityLabels.statusClass(599) == "5xx")
        #expect(ObservabilityLabels.statusClass(nil) == "error")
        #expect(ObservabilityLabels.statusClass(999) == "error")
        #expect(ObservabilityLabels.errorType(EngineError.timedOut(.connect)) == "timeout_connect")
        #expect(ObservabilityLabels.errorType(EngineError.cannotConnect(host: "h", port: 1, reason: "refused")) == "cannot_connect")
        #expect(ObservabilityLabels.errorType(EngineError.shutDown) == "shut_down")
        #expect(ObservabilityLabels.errorType(EngineError.decompressionLimitExceeded("x")) == "decompression_limit_exceeded")
        #expect(ObservabilityLabels.errorType(CourierError.cancelled(url: nil)) == "cancelled")
        #expect(ObservabilityLabels.errorType(CocoaError(.fileNoSuchFile)) == "CocoaError")
    }

    @Test func millisecondsAreFormatted() {
        #expect(TaskObservation.milliseconds(.microseconds(1_234_567)) == "1234.567")
        #expect(TaskObservation.milliseconds(.microseconds(5)) == "0.005")
    }
}
