import Foundation
import NIOHTTP1

/// httpbin's authentication endpoints: Basic, hidden Basic, Bearer and Digest.
enum AuthEndpoints {
    /// `/basic-auth/{user}/{password}`: 200 `{"authenticated": true, "user": ...}` for the right
    /// credentials, else 401 with a Basic challenge.
    static func basic(_ request: ServerRequest, user: String, password: String) -> ServerReply {
        guard let credentials = basicCredentials(request), credentials == (user, password) else { return StatusEndpoints.reply(for: 401) }
        return .json(["authenticated": true, "user": .string(user)])
    }

    /// `/hidden-basic-auth/{user}/{password}`: like `/basic-auth` but 404 instead of a challenge.
    static func hiddenBasic(_ request: ServerRequest, user: String, password: String) -> ServerReply {
        guard let credentials = basicCredentials(request), credentials == (user, password) else { return .notFound }
        return .json(["authenticated": true, "user": .string(user)])
    }

    /// `/bearer`: 200 `{"authenticated": true, "token": ...}` for `Authorization: Bearer <token>`,
    /// else 401 with `WWW-Authenticate: Bearer`.
    static func bearer(_ request: ServerRequest) -> ServerReply {
        guard let authorization = request.headers.first(name: "authorization"), authorization.hasPrefix("Bearer ") else {
            return .empty(.unauthorized, headers: ["WWW-Authenticate": "Bearer"])
        }
        return .json(["authenticated": true, "token": .string(String(authorization.dropFirst("Bearer ".count)))])
    }

    /// `/digest-auth/{qop}/{user}/{password}[/{algorithm}]`: 401 with a Digest challenge until
    /// the client answers it correctly, then `{"authenticated": true, "user": ...}` with the
    /// answer's `nc` in an `X-Digest-Nc` header. `qop` is `auth` or `auth-int` (anything else
    /// offers both); `algorithm` is `MD5` (default), `SHA-256` or `SHA-512`. Not httpbin:
    /// - `?stale_nonce=true`: the first challenge carries an expired nonce, so a right answer
    ///   to it gets a fresh challenge with `stale=TRUE`;
    /// - `?offer=basic,md5,sha-256`: decoy challenges before the real one (a Basic, and Digest
    ///   challenges with those algorithms that the server will not accept), each in its own
    ///   `WWW-Authenticate` field, or all in one field with `&layout=inline`.
    static func digest(
        _ request: ServerRequest,
        digest: DigestAuthentication,
        qop: String,
        user: String,
        password: String,
        algorithm: String?
    ) -> ServerReply {
        let protection = DigestAuthentication.QualityOfProtection(rawValue: qop)
        let algorithm = DigestAuthentication.Algorithm(pathComponent: algorithm)
        var verdict = DigestAuthentication.Verdict.rejected
        let authorization = request.headers.first(name: "authorization")
        if let authorization {
            verdict = digest.verify(
                authorization: authorization,
                method: request.method.rawValue,
                uri: request.head.uri,
                body: request.bodyBytes,
                user: user,
                password: password,
                qop: protection,
                algorithm: algorithm
            )
        }
        if verdict == .authenticated {
            var headers: HTTPHeaders = [:]
            if let nc = authorization.flatMap(DigestAuthentication.nonceCount(ofDigestCredentials:)) {
                headers.add(name: "X-Digest-Nc", value: nc)
            }
            return .json(["authenticated": true, "user": .string(user)], headers: headers)
        }
        let expired = authorization == nil && request.queryValue("stale_nonce")?.lowercased() == "true"
        let now = expired ? Date().addingTimeInterval(-2 * DigestAuthentication.nonceLifetime) : Date()
        var challenges: [String] = []
        for decoy in (request.queryValue("offer") ?? "").split(separator: ",") {
            switch decoy.lowercased() {
            case "basic": challenges.append("Basic realm=\"\(DigestAuthentication.realm)\", charset=\"UTF-8\"")
            default:
                let decoyAlgorithm = DigestAuthentication.Algorithm(pathComponent: String(decoy))
                if decoyAlgorithm != algorithm {
                    challenges.append(digest.challenge(qop: protection, algorithm: decoyAlgorithm, now: now))
                }
            }
        }
        challenges.append(digest.challenge(qop: protection, algorithm: algorithm, stale: verdict == .stale, now: now))
        var headers: HTTPHeaders = ["Content-Type": "text/html; charset=utf-8"]
        if request.queryValue("layout") == "inline" {
            headers.add(name: "WWW-Authenticate", value: challenges.joined(separator: ", "))
        } else {
            for challenge in challenges { headers.add(name: "WWW-Authenticate", value: challenge) }
        }
        return .empty(.unauthorized, headers: headers)
    }

    /// The user and password of an `Authorization: Basic` header.
    static func basicCredentials(_ request: ServerRequest) -> (String, String)? {
        guard let authorization = request.headers.first(name: "authorization") else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: parts[1].trimmingASCIIWhitespace()),
            let text = String(data: decoded, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}
