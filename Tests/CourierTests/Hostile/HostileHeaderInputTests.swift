@testable import Courier
import Foundation
import Testing

/// Hostile `WWW-Authenticate` inputs a server controls, fed to the pure Digest parser and
/// answer builder, and the per-nonce state a server can grow.
@Suite struct HostileHeaderInputTests {
    private static func answer(_ challenge: AuthenticationHeader.Challenge, nonceCount: UInt32 = 1) -> String? {
        AuthenticationHeader.digest(
            challenge, user: "u", password: "p", method: "GET", uri: "/", nonceCount: nonceCount, clientNonce: "c")
    }

    @Test func aOneMebibyteFieldParsesIntoOneChallenge() {
        let big = String(repeating: "a", count: 1 << 20)
        let challenges = AuthenticationHeader.challenges(in: ["Digest realm=\"\(big)\", nonce=\"n\", qop=\"auth\""])
        #expect(challenges.count == 1)
        #expect(challenges.first?.parameters["realm"]?.utf8.count == 1 << 20)
    }

    @Test func tenThousandChallengesAreAllReadInOnePass() {
        let field = (0..<10_000).map { "Digest realm=\"r\($0)\", nonce=\"n\($0)\"" }.joined(separator: ", ")
        let challenges = AuthenticationHeader.challenges(in: [field])
        #expect(challenges.count == 10_000)
        #expect(challenges.last?.parameters["nonce"] == "n9999")
    }

    @Test func aMebibyteOfUnclosedQuotesOrBareCommasEnds() {
        #expect(AuthenticationHeader.challenges(in: [String(repeating: ",", count: 1 << 20)]).isEmpty)
        #expect(AuthenticationHeader.challenges(in: ["Digest realm=\"" + String(repeating: "\\\"", count: 1 << 19)]).isEmpty)
        #expect(AuthenticationHeader.challenges(in: [String(repeating: "x=", count: 1 << 19)]).count <= 1)
    }

    @Test(arguments: ["realm", "nonce", "opaque"])
    func controlCharactersInServerValuesAreNotSentBack(parameter: String) throws {
        for bad in ["a\r\nX-Injected: 1", "a\nb", "a\u{0}b", "a\u{7F}b"] {
            var parameters = ["realm": "r", "nonce": "n", "qop": "auth", "opaque": "o"]
            parameters[parameter] = bad
            let value = Self.answer(AuthenticationHeader.Challenge(scheme: "Digest", parameters: parameters))
            // Either no answer, or one valid header line: no CTL other than HTAB.
            if let value {
                #expect(!value.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }, "\(value.debugDescription)")
            }
        }
    }

    @Test func quotesAndBackslashesInServerValuesStayInsideTheirQuotedString() throws {
        let challenge = AuthenticationHeader.Challenge(
            scheme: "Digest", parameters: ["realm": "a\", evil=\"1", "nonce": "n\\", "qop": "auth", "opaque": "\""])
        let value = try #require(Self.answer(challenge))
        let reparsed = try #require(AuthenticationHeader.parse(value))
        #expect(reparsed.parameters["realm"] == "a\", evil=\"1")
        #expect(reparsed.parameters["nonce"] == "n\\")
        #expect(reparsed.parameters["opaque"] == "\"")
        #expect(reparsed.parameters["evil"] == nil)
    }

    @Test(arguments: ["MD5-sess", "SHA-512-256", "", "basic", "md5\u{0}"])
    func anUnknownAlgorithmGetsNoAnswer(algorithm: String) {
        let challenge = AuthenticationHeader.Challenge(
            scheme: "Digest", parameters: ["realm": "r", "nonce": "n", "qop": "auth", "algorithm": algorithm])
        #expect(Self.answer(challenge) == nil)
    }

    @Test func theNonceCountStopsAtItsMaximumWithoutTrapping() throws {
        let challenge = AuthenticationHeader.Challenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "n", "qop": "auth"])
        let value = try #require(Self.answer(challenge, nonceCount: .max))
        #expect(value.contains("nc=ffffffff"))
        #expect(AuthenticationHeader.hex8(0) == "00000000")
    }

    @Test func manyDistinctNoncesKeepTheStateBounded() throws {
        let authenticator = DigestAuthenticator()
        let origin = try #require(CredentialScope.Origin(URL(string: "http://example.com/")))
        for index in 0..<20_000 {
            #expect(authenticator.nextCount(origin: origin, realm: "r", nonce: "n\(index)") == 1)
        }
        // A nonce that was pruned restarts at 1; the current one keeps counting.
        #expect(authenticator.nextCount(origin: origin, realm: "r", nonce: "n19999") == 2)
        #expect(authenticator.storedNonceCount <= DigestAuthenticator.maximumNonces)
    }
}
