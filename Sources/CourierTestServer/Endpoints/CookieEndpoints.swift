/// httpbin's cookie endpoints.
enum CookieEndpoints {
    /// `/cookies`: the cookies the client sent, as `{"cookies": {...}}`.
    static func cookies(_ request: ServerRequest) -> ServerReply {
        .json(["cookies": .object(requestCookies(request).mapValues(JSONNode.string))])
    }

    /// `/cookies/set?name=value...` and `/cookies/set/{name}/{value}`: sets each cookie
    /// (`Path=/`) and redirects to `/cookies`.
    static func set(_ cookies: [(name: String, value: String)]) -> ServerReply {
        var headers: [(String, String)] = [("Location", "/cookies"), ("Content-Type", "text/html; charset=utf-8")]
        for cookie in cookies {
            headers.append(("Set-Cookie", "\(cookie.name)=\(cookie.value); Path=/"))
        }
        return .full(status: .found, headers: .init(headers), body: [])
    }

    /// `/cookies/delete?name...`: expires each named cookie and redirects to `/cookies`.
    static func delete(_ request: ServerRequest) -> ServerReply {
        var headers: [(String, String)] = [("Location", "/cookies"), ("Content-Type", "text/html; charset=utf-8")]
        for name in request.query.map(\.name) {
            headers.append(("Set-Cookie", "\(name)=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"))
        }
        return .full(status: .found, headers: .init(headers), body: [])
    }

    /// The `Cookie` headers' pairs; on a repeated name the first wins.
    static func requestCookies(_ request: ServerRequest) -> [String: String] {
        var result: [String: String] = [:]
        for header in request.headers["cookie"] {
            for pair in header.split(separator: ";") {
                let pieces = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = pieces[0].trimmingASCIIWhitespace()
                guard !name.isEmpty, result[name] == nil else { continue }
                var value = pieces.count > 1 ? pieces[1].trimmingASCIIWhitespace() : ""
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast())
                }
                result[name] = value
            }
        }
        return result
    }
}
