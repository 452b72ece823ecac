import Foundation
import Testing

@testable import CourierTestServer

@Suite("Digest authentication internals: nonces and credential parsing")
struct DigestAuthenticationTests {
    static func answer(_ digest: DigestAuthentication, nonce: String, algorithm: DigestAuthentication.Algorithm) -> String {
        let ha1 = algorithm.hash("u:\(DigestAuthentication.realm):p")
        let ha2 = algorithm.hash("GET:/x")
        let response = algorithm.hash("\(ha1):\(nonce):00000001:c:auth:\(ha2)")
        return """
            Digest username="u", realm="\(DigestAuthentication.realm)", nonce="\(nonce)", uri="/x", \
            algorithm=\(algorithm.rawValue), response="\(response)", opaque="\(digest.opaque)", qop=auth, nc=00000001, cnonce="c"
            """
    }

    func verify(_ digest: DigestAuthentication, _ authorization: String, now: Date) -> DigestAuthentication.Verdict {
        digest.verify(
            authorization: authorization,
            method: "GET",
            uri: "/x",
            body: [],
            user: "u",
            password: "p",
            qop: .auth,
            algorithm: .sha256,
            now: now
        )
    }

    @Test("a nonce verifies while fresh, is stale after five minutes, and another server's is rejected")
    func nonceLifetime() {
        let digest = DigestAuthentication()
        let issued = Date(timeIntervalSince1970: 1_800_000_000)
        let nonce = digest.makeNonce(at: issued)
        let authorization = Self.answer(digest, nonce: nonce, algorithm: .sha256)
        #expect(verify(digest, authorization, now: issued.addingTimeInterval(10)) == .authenticated)
        #expect(verify(digest, authorization, now: issued.addingTimeInterval(301)) == .stale)
        #expect(verify(DigestAuthentication(), authorization, now: issued) == .rejected)
        #expect(digest.challenge(qop: .auth, algorithm: .sha256, stale: true, now: issued).contains("stale=TRUE"))
    }

    @Test("the -sess variant hashes the nonce and cnonce into HA1")
    func sessionVariant() {
        let digest = DigestAuthentication()
        let now = Date()
        let nonce = digest.makeNonce(at: now)
        let algorithm = DigestAuthentication.Algorithm.md5
        let ha1 = algorithm.hash("\(algorithm.hash("u:\(DigestAuthentication.realm):p")):\(nonce):c")
        let response = algorithm.hash("\(ha1):\(nonce):00000001:c:auth:\(algorithm.hash("GET:/x"))")
        let authorization = """
            Digest username="u", realm="\(DigestAuthentication.realm)", nonce="\(nonce)", uri="/x", algorithm=MD5-sess, \
            response="\(response)", opaque="\(digest.opaque)", qop=auth, nc=00000001, cnonce="c"
            """
        let verdict = digest.verify(
            authorization: authorization, method: "GET", uri: "/x", body: [], user: "u", password: "p",
            qop: .auth, algorithm: .md5, now: now
        )
        #expect(verdict == .authenticated)
    }

    @Test("credentials parsing: quoted strings with commas and escapes, tokens, broken syntax")
    func parsing() {
        let parsed = DigestAuthentication.parameters(
            ofDigestCredentials: #"Digest username="a, \"b\"", qop=auth, nc=00000001, uri="/p?x=1,2""#
        )
        #expect(parsed == ["username": #"a, "b""#, "qop": "auth", "nc": "00000001", "uri": "/p?x=1,2"])
        #expect(DigestAuthentication.parameters(ofDigestCredentials: "Basic abc") == nil)
        #expect(DigestAuthentication.parameters(ofDigestCredentials: #"Digest username="unterminated"#) == nil)
        #expect(DigestAuthentication.parameters(ofDigestCredentials: #"Digest a="1", a="2""#) == nil)
    }

    @Test("known digests (RFC 1321, FIPS 180-2)")
    func hashes() {
        #expect(DigestAuthentication.Algorithm.md5.hash("abc") == "900150983cd24fb0d6963f7d28e17f72")
        #expect(DigestAuthentication.Algorithm.sha256.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
