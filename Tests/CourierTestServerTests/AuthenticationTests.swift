import Crypto
import CourierTestServer
import Foundation
import Testing

@Suite("Basic, Bearer and Digest authentication")
struct AuthenticationTests {
    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    @Test("/basic-auth: 401 with a challenge, then 200 for the right credentials")
    func basicAuth() async throws {
        try await TestServer.withRunning { server in
            let challenge = try await server.request("/basic-auth/user/pa:ss")
            #expect(challenge.status == 401)
            #expect(challenge.header("www-authenticate") == "Basic realm=\"Fake Realm\"")
            let wrong = try await server.request("/basic-auth/user/pa:ss", headers: [("Authorization", Self.basic("user", "nope"))])
            #expect(wrong.status == 401)
            let right = try await server.request("/basic-auth/user/pa:ss", headers: [("Authorization", Self.basic("user", "pa:ss"))])
            #expect(right.status == 200)
            #expect(right.json?["authenticated"] as? Bool == true)
            #expect(right.string("user") == "user")
        }
    }

    @Test("/hidden-basic-auth: 404 instead of a challenge")
    func hiddenBasicAuth() async throws {
        try await TestServer.withRunning { server in
            let missing = try await server.request("/hidden-basic-auth/u/p")
            #expect(missing.status == 404)
            #expect(missing.header("www-authenticate") == nil)
            let right = try await server.request("/hidden-basic-auth/u/p", headers: [("Authorization", Self.basic("u", "p"))])
            #expect(right.status == 200)
            #expect(right.string("user") == "u")
        }
    }

    @Test("/bearer")
    func bearer() async throws {
        try await TestServer.withRunning { server in
            let missing = try await server.request("/bearer")
            #expect(missing.status == 401)
            #expect(missing.header("www-authenticate") == "Bearer")
            let basic = try await server.request("/bearer", headers: [("Authorization", Self.basic("a", "b"))])
            #expect(basic.status == 401)
            let ok = try await server.request("/bearer", headers: [("Authorization", "Bearer abc.def")])
            #expect(ok.status == 200)
            #expect(ok.string("token") == "abc.def")
            #expect(ok.json?["authenticated"] as? Bool == true)
        }
    }

    /// The parameters of a `Digest` challenge.
    static func challengeParameters(_ header: String) throws -> [String: String] {
        #expect(header.hasPrefix("Digest "))
        var result: [String: String] = [:]
        let pattern = try NSRegularExpression(pattern: #"(\w+)=(?:"([^"]*)"|([^,\s]+))"#)
        let range = NSRange(header.startIndex..., in: header)
        for match in pattern.matches(in: header, range: range) {
            guard let name = Range(match.range(at: 1), in: header) else { continue }
            let valueRange = Range(match.range(at: 2), in: header) ?? Range(match.range(at: 3), in: header)
            result[String(header[name])] = valueRange.map { String(header[$0]) }
        }
        return result
    }

    static func hash(_ text: String, algorithm: String) -> String {
        let bytes = Array(text.utf8)
        let digest: [UInt8] =
            switch algorithm {
            case "SHA-256": Array(SHA256.hash(data: bytes))
            default: Array(Insecure.MD5.hash(data: bytes))
            }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// Computes the RFC 7616 answer to `challenge`.
    static func authorization(
        challenge: [String: String],
        user: String,
        password: String,
        method: String,
        uri: String,
        algorithm: String,
        qop: String = "auth",
        body: [UInt8] = []
    ) -> String {
        let realm = challenge["realm"] ?? ""
        let nonce = challenge["nonce"] ?? ""
        let cnonce = "0a4f113b"
        let nc = "00000001"
        let ha1 = hash("\(user):\(realm):\(password)", algorithm: algorithm)
        let ha2 =
            qop == "auth-int"
            ? hash("\(method):\(uri):\(hash(String(decoding: body, as: UTF8.self), algorithm: algorithm))", algorithm: algorithm)
            : hash("\(method):\(uri)", algorithm: algorithm)
        let response = hash("\(ha1):\(nonce):\(nc):\(cnonce):\(qop):\(ha2)", algorithm: algorithm)
        return """
            Digest username="\(user)", realm="\(realm)", nonce="\(nonce)", uri="\(uri)", algorithm=\(algorithm), \
            response="\(response)", opaque="\(challenge["opaque"] ?? "")", qop=\(qop), nc=\(nc), cnonce="\(cnonce)"
            """
    }

    @Test("/digest-auth handshake", arguments: ["MD5", "SHA-256"])
    func digestHandshake(algorithm: String) async throws {
        try await TestServer.withRunning { server in
            let uri = algorithm == "MD5" ? "/digest-auth/auth/alice/s3cret" : "/digest-auth/auth/alice/s3cret/\(algorithm)"
            let first = try await server.request(uri)
            #expect(first.status == 401)
            let challenge = try Self.challengeParameters(try #require(first.header("www-authenticate")))
            #expect(challenge["qop"] == "auth")
            #expect(challenge["algorithm"] == algorithm)
            #expect(challenge["stale"] == "FALSE")
            #expect(challenge["realm"]?.isEmpty == false)
            #expect(challenge["opaque"]?.isEmpty == false)
            #expect(challenge["nonce"]?.isEmpty == false)

            let good = Self.authorization(challenge: challenge, user: "alice", password: "s3cret", method: "GET", uri: uri, algorithm: algorithm)
            let ok = try await server.request(uri, headers: [("Authorization", good)])
            #expect(ok.status == 200)
            #expect(ok.json?["authenticated"] as? Bool == true)
            #expect(ok.string("user") == "alice")

            let wrongPassword = Self.authorization(challenge: challenge, user: "alice", password: "guess", method: "GET", uri: uri, algorithm: algorithm)
            #expect(try await server.request(uri, headers: [("Authorization", wrongPassword)]).status == 401)

            var forged = challenge
            forged["nonce"] = String(repeating: "0", count: 80)
            let badNonce = Self.authorization(challenge: forged, user: "alice", password: "s3cret", method: "GET", uri: uri, algorithm: algorithm)
            #expect(try await server.request(uri, headers: [("Authorization", badNonce)]).status == 401)

            let wrongURI = Self.authorization(challenge: challenge, user: "alice", password: "s3cret", method: "GET", uri: "/other", algorithm: algorithm)
            #expect(try await server.request(uri, headers: [("Authorization", wrongURI)]).status == 401)

            let otherAlgorithm = algorithm == "MD5" ? "SHA-256" : "MD5"
            let mismatched = Self.authorization(challenge: challenge, user: "alice", password: "s3cret", method: "GET", uri: uri, algorithm: otherAlgorithm)
            #expect(try await server.request(uri, headers: [("Authorization", mismatched)]).status == 401)
        }
    }

    @Test("/digest-auth with qop=auth-int covers the body")
    func digestAuthInt() async throws {
        try await TestServer.withRunning { server in
            let uri = "/digest-auth/auth-int/bob/pw/SHA-256"
            let first = try await server.request(uri, method: "POST", body: Array("payload".utf8))
            let challenge = try Self.challengeParameters(try #require(first.header("www-authenticate")))
            #expect(challenge["qop"] == "auth-int")
            let answer = Self.authorization(
                challenge: challenge, user: "bob", password: "pw", method: "POST", uri: uri,
                algorithm: "SHA-256", qop: "auth-int", body: Array("payload".utf8)
            )
            #expect(try await server.request(uri, method: "POST", headers: [("Authorization", answer)], body: Array("payload".utf8)).status == 200)
            #expect(try await server.request(uri, method: "POST", headers: [("Authorization", answer)], body: Array("tampered".utf8)).status == 401)
        }
    }
}
