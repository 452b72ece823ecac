@testable import Courier
import Foundation
import Testing

/// The pure parts of authentication, with plain values: the `WWW-Authenticate` parser, the
/// choice of challenge, credential scopes, Digest answers and nonce counts, and the per-task
/// attempt rules.
@Suite("authentication rules")
struct AuthenticationRuleTests {
    typealias Challenge = AuthenticationHeader.Challenge

    // MARK: - Parsing (RFC 9110 §11.6.1)

    @Test("several challenges in one field, each with its parameters")
    func severalChallengesInOneField() {
        let parsed = AuthenticationHeader.challenges(in: [
            #"Basic realm="simple", Newauth realm="apps", type=1, title="Login to \"apps\"", Digest realm="d", nonce="n""#
        ])
        #expect(parsed.map(\.scheme) == ["Basic", "Newauth", "Digest"])
        #expect(parsed[0].parameters == ["realm": "simple"])
        #expect(parsed[1].parameters == ["realm": "apps", "type": "1", "title": #"Login to "apps""#])
        #expect(parsed[2].parameters == ["realm": "d", "nonce": "n"])
    }

    @Test("every field is read, in order")
    func everyField() {
        let parsed = AuthenticationHeader.challenges(in: [#"Basic realm="a""#, #"Digest realm="b", nonce="x", algorithm=SHA-256"#])
        #expect(parsed.map(\.scheme) == ["Basic", "Digest"])
        #expect(parsed[1].parameters["algorithm"] == "SHA-256")
    }

    @Test("token68, bare schemes, empty list elements, names case-insensitive, whitespace around =")
    func grammarCorners() {
        let parsed = AuthenticationHeader.challenges(in: [
            "Negotiate abc+/def==, , Bearer,Basic REALM = \"x\" ,\tOther  a=b"
        ])
        #expect(parsed.count == 4)
        #expect(parsed[0] == Challenge(scheme: "Negotiate", parameters: [:], token68: "abc+/def=="))
        #expect(parsed[1] == Challenge(scheme: "Bearer", parameters: [:]))
        #expect(parsed[2] == Challenge(scheme: "Basic", parameters: ["realm": "x"]))
        #expect(parsed[3] == Challenge(scheme: "Other", parameters: ["a": "b"]))
    }

    @Test("commas and escapes inside quoted strings do not split challenges")
    func quotedCommas() {
        let parsed = AuthenticationHeader.challenges(in: [#"Digest realm="a, Basic b=c", nonce="q\\\"x", qop="auth,auth-int""#])
        #expect(parsed.count == 1)
        #expect(parsed[0].parameters["realm"] == "a, Basic b=c")
        #expect(parsed[0].parameters["nonce"] == #"q\"x"#)
        #expect(parsed[0].parameters["qop"] == "auth,auth-int")
    }

    @Test("malformed challenges are left out: repeated names, missing values, unterminated quotes")
    func malformed() {
        #expect(AuthenticationHeader.challenges(in: [#"Digest realm="a", realm="b", nonce="n""#]).isEmpty)
        #expect(AuthenticationHeader.challenges(in: [#"Digest realm=, Basic realm="x""#]).map(\.scheme) == ["Basic"])
        #expect(AuthenticationHeader.challenges(in: [#"Basic realm="x", Digest realm="unterminated"#]).map(\.scheme) == ["Basic"])
        #expect(AuthenticationHeader.challenges(in: ["", " , ,", "=", "\"", "Basic\"x\"", "\\"]).isEmpty)
        #expect(AuthenticationHeader.parse(#"Basic realm="x""#)?.parameters["realm"] == "x")
    }

    // MARK: - Choosing

    @Test("Digest SHA-256 over Digest MD5 over Basic; unsupported ones skipped; allowed schemes respected")
    func strongest() {
        let basic = Challenge(scheme: "Basic", parameters: ["realm": "r"])
        let md5 = Challenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "1", "qop": "auth"])
        let sha = Challenge(scheme: "digest", parameters: ["realm": "r", "nonce": "2", "algorithm": "sha-256", "qop": "auth, auth-int"])
        let authIntOnly = Challenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "3", "algorithm": "SHA-256", "qop": "auth-int"])
        let sha512 = Challenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "4", "algorithm": "SHA-512"])
        let noNonce = Challenge(scheme: "Digest", parameters: ["realm": "r", "algorithm": "SHA-256"])
        let bearer = Challenge(scheme: "Bearer", parameters: [:])
        #expect(ChallengeSelection.strongest([basic, md5, sha]) == sha)
        #expect(ChallengeSelection.strongest([sha, md5, basic]) == sha)
        #expect(ChallengeSelection.strongest([basic, md5]) == md5)
        #expect(ChallengeSelection.strongest([bearer, authIntOnly, sha512, noNonce, basic]) == basic)
        #expect(ChallengeSelection.strongest([bearer, authIntOnly, sha512, noNonce]) == nil)
        // Digest only: Basic is never chosen.
        #expect(ChallengeSelection.strongest([basic], allowed: .digest) == nil)
        #expect(ChallengeSelection.strongest([basic, md5], allowed: .digest) == md5)
        #expect(ChallengeSelection.strongest([basic, sha], allowed: .basic) == basic)
    }

    // MARK: - Scopes

    @Test("an origin is scheme, host and port (default ports filled in); a bound realm must match")
    func scopes() throws {
        let origin = try #require(CredentialScope.Origin(URL(string: "http://Example.com/a")))
        #expect(origin == CredentialScope.Origin(URL(string: "http://example.com:80/b?c")))
        #expect(origin != CredentialScope.Origin(URL(string: "https://example.com/a")))
        #expect(origin != CredentialScope.Origin(URL(string: "http://example.com:8080/a")))
        #expect(origin != CredentialScope.Origin(URL(string: "http://evil.example.com/a")))
        #expect(CredentialScope.Origin(URL(string: "file:///etc/passwd")) == nil)
        #expect(CredentialScope.Origin(nil) == nil)
        let open = CredentialScope(origin: origin, realm: nil)
        #expect(open.covers(URL(string: "http://example.com/x"), realm: "any"))
        #expect(!open.covers(URL(string: "https://example.com/x"), realm: "any"))
        let bound = CredentialScope(origin: origin, realm: "r")
        #expect(bound.covers(URL(string: "http://example.com/x"), realm: "r"))
        #expect(!bound.covers(URL(string: "http://example.com/x"), realm: "other"))
        #expect(!bound.covers(URL(string: "http://example.com/x"), realm: nil))
    }

    // MARK: - Answers

    @Test("Digest MD5 answer matches RFC 2617 §3.5's example; quoted values escaped")
    func digestAnswer() throws {
        let challenge = Challenge(
            scheme: "Digest",
            parameters: [
                "realm": "testrealm@host.com", "qop": "auth,auth-int", "nonce": "dcd98b7102dd2f0e8b11d0f600bfb0c093",
                "opaque": "5ccc069c403ebaf9f0171e9517f40e41",
            ])
        let value = try #require(
            AuthenticationHeader.digest(
                challenge, user: "Mufasa", password: "Circle Of Life", method: "GET", uri: "/dir/index.html", nonceCount: 1,
                clientNonce: "0a4f113b"))
        #expect(value.contains(#"response="6629fae49393a05397450978507c4ef1""#))
        #expect(value.contains("nc=00000001"))
        #expect(value.contains("qop=auth,") || value.contains("qop=auth, "))
        #expect(value.contains(#"opaque="5ccc069c403ebaf9f0171e9517f40e41""#))
        let escaped = try #require(
            AuthenticationHeader.digest(
                challenge, user: #"a"b\c"#, password: "p", method: "GET", uri: "/", nonceCount: 0x1A, clientNonce: "c"))
        #expect(escaped.contains(#"username="a\"b\\c""#))
        #expect(escaped.contains("nc=0000001a"))
        #expect(AuthenticationHeader.digest(challenge, user: "a\r\nX: y", password: "p", method: "GET", uri: "/", nonceCount: 1, clientNonce: "c") == nil)
        #expect(AuthenticationHeader.basic(user: "a:b", password: "p") == nil)
        #expect(AuthenticationHeader.basic(user: "Aladdin", password: "open sesame") == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    }

    @Test("client nonces are random: 32 hex digits, different each time")
    func clientNonces() {
        let nonces = (0..<100).map { _ in AuthenticationHeader.makeClientNonce() }
        #expect(Set(nonces).count == 100)
        #expect(nonces.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }

    @Test("nc counts per nonce, realm and origin; remembered challenges per origin; reset forgets")
    func nonceCounts() throws {
        let authenticator = DigestAuthenticator()
        let a = try #require(CredentialScope.Origin(URL(string: "http://a.test")))
        let b = try #require(CredentialScope.Origin(URL(string: "http://b.test")))
        #expect(authenticator.nextCount(origin: a, realm: "r", nonce: "n1") == 1)
        #expect(authenticator.nextCount(origin: a, realm: "r", nonce: "n1") == 2)
        #expect(authenticator.nextCount(origin: a, realm: "r", nonce: "n2") == 1)
        #expect(authenticator.nextCount(origin: b, realm: "r", nonce: "n1") == 1)
        #expect(authenticator.nextCount(origin: a, realm: "r", nonce: "n1") == 3)
        let digest = Challenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "n1", "qop": "auth"])
        authenticator.remember(Challenge(scheme: "Basic", parameters: ["realm": "r"]), for: a)
        authenticator.remember(Challenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "n0"]), for: a)  // no qop: no nc
        #expect(authenticator.challenge(for: a) == nil)
        authenticator.remember(digest, for: a)
        #expect(authenticator.challenge(for: a) == digest)
        #expect(authenticator.challenge(for: b) == nil)
        authenticator.reset()
        #expect(authenticator.challenge(for: a) == nil)
        #expect(authenticator.nextCount(origin: a, realm: "r", nonce: "n1") == 1)
        // Bounded: many nonces do not grow without limit, and counting goes on.
        for index in 0..<(DigestAuthenticator.maximumNonces + 10) {
            _ = authenticator.nextCount(origin: a, realm: "r", nonce: "many\(index)")
        }
        #expect(authenticator.nextCount(origin: a, realm: "r", nonce: "fresh") == 1)
    }

    // MARK: - Attempts

    @Test("the session credential applies once, only at the original origin, then only in its realm")
    func sessionCredentialScope() throws {
        let original = URL(string: "https://api.test/start")
        var attempts = AuthenticationAttempts()
        #expect(attempts.sessionCredentialApplies(originalURL: original, url: URL(string: "https://api.test/x"), realm: "r"))
        #expect(!attempts.sessionCredentialApplies(originalURL: original, url: URL(string: "https://other.test/x"), realm: "r"))
        #expect(!attempts.sessionCredentialApplies(originalURL: original, url: URL(string: "http://api.test/x"), realm: "r"))
        let origin = try #require(CredentialScope.Origin(original))
        let answer = AuthenticationAttempts.Answer(
            scope: CredentialScope(origin: origin, realm: "r"), isDigest: false, user: "u", password: "p", isSessionCredential: true)
        attempts.record(answer, aheadOfTime: true)
        #expect(attempts.failures == 0)
        #expect(attempts.sessionCredentialApplies(originalURL: original, url: URL(string: "https://api.test/x"), realm: "r"))
        #expect(!attempts.sessionCredentialApplies(originalURL: original, url: URL(string: "https://api.test/x"), realm: "other"))
        attempts.record(answer)
        #expect(attempts.failures == 1)
        #expect(!attempts.sessionCredentialApplies(originalURL: original, url: URL(string: "https://api.test/x"), realm: "r"))
    }

    @Test("a stale Digest refusal is retried once, in the same scope, and is not a failure; answers are bounded")
    func staleAndBound() throws {
        let url = URL(string: "http://a.test/p")
        let origin = try #require(CredentialScope.Origin(url))
        let answer = AuthenticationAttempts.Answer(
            scope: CredentialScope(origin: origin, realm: "r"), isDigest: true, user: "u", password: "p", isSessionCredential: true)
        let stale = Challenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "new", "qop": "auth", "stale": "TRUE"])
        let fresh = Challenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "new", "qop": "auth", "stale": "false"])
        let otherRealm = Challenge(scheme: "Digest", parameters: ["realm": "x", "nonce": "new", "qop": "auth", "stale": "true"])
        var attempts = AuthenticationAttempts()
        #expect(attempts.staleRetry([stale], url: url) == nil)  // nothing answered yet
        attempts.record(answer)
        #expect(attempts.staleRetry([fresh], url: url) == nil)
        #expect(attempts.staleRetry([otherRealm], url: url) == nil)
        #expect(attempts.staleRetry([stale], url: URL(string: "http://b.test/p")) == nil)
        let retry = try #require(attempts.staleRetry([Challenge(scheme: "Basic", parameters: [:]), stale], url: url))
        #expect(retry.challenge == stale)
        attempts.record(retry.answer, stale: true)
        #expect(attempts.failures == 1)
        #expect(attempts.staleRetry([stale], url: url) == nil)  // only once
        while !attempts.exhausted { attempts.record(answer) }
        #expect(attempts.answers == AuthenticationAttempts.maximumAnswers)
        #expect(!attempts.sessionCredentialApplies(originalURL: url, url: url, realm: "r"))
    }
}
