import NIOHTTP1

/// `/status/{codes}` and `/response-headers`: responses whose status and headers the client picks.
enum StatusEndpoints {
    /// The media types `/image` can serve, listed in a 406 body like httpbin.
    static let acceptedImageTypes: [JSONNode] = ["image/webp", "image/svg+xml", "image/jpeg", "image/png", "image/*"]

    /// `/status/{codes}` (any method): one status code, or a comma list (`200,201`, optionally
    /// weighted `200:0.9,500:0.1`) from which one is drawn at random. Some codes carry
    /// httpbin's extras (a `Location` for redirects, challenges for 401 and 407, a teapot for 418).
    static func status(_ request: ServerRequest, codes: String) -> ServerReply {
        var choices: [(code: Int, weight: Double)] = []
        for item in codes.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = item.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let code = Int(pieces[0].trimmingASCIIWhitespace()), (200..<600).contains(code) else {
                return .text("Invalid status code", status: .badRequest)
            }
            var weight = 1.0
            if pieces.count > 1 {
                guard let parsed = Double(pieces[1].trimmingASCIIWhitespace()), parsed >= 0, parsed.isFinite else {
                    return .text("Invalid status code", status: .badRequest)
                }
                weight = parsed
            }
            choices.append((code, weight))
        }
        return reply(for: pick(choices))
    }

    /// Draws a code with probability proportional to its weight.
    private static func pick(_ choices: [(code: Int, weight: Double)]) -> Int {
        if choices.count == 1 { return choices[0].code }
        let total = choices.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return choices[0].code }
        var remaining = Double.random(in: 0..<total)
        for choice in choices {
            if remaining < choice.weight { return choice.code }
            remaining -= choice.weight
        }
        return choices[choices.count - 1].code
    }

    /// httpbin's `status_code(code)`.
    static func reply(for code: Int) -> ServerReply {
        let status = HTTPResponseStatus(statusCode: code)
        switch code {
        case 301, 302, 303, 305, 307:
            return .empty(status, headers: ["Location": "/redirect/1"])
        case 401:
            return .empty(status, headers: ["WWW-Authenticate": "Basic realm=\"Fake Realm\""])
        case 402:
            return .text("Payment required.", status: status, headers: ["x-more-info": "http://vimeo.com/22053820"])
        case 406:
            return .json(
                ["message": "Client did not request a supported media type.", "accept": .array(acceptedImageTypes)],
                status: status
            )
        case 407:
            return .empty(status, headers: ["Proxy-Authenticate": "Basic realm=\"Fake Realm\""])
        case 418:
            return .text(SampleDocuments.teapot, status: status, headers: ["x-more-info": "http://tools.ietf.org/html/rfc2324"])
        default:
            return .empty(status)
        }
    }

    /// `/response-headers?name=value...` (GET, POST): each pair becomes a response header, and
    /// the body lists all response headers as JSON, `Content-Length` included (httpbin computes
    /// it until the length it announces is the length of the body announcing it).
    static func responseHeaders(_ request: ServerRequest) -> ServerReply {
        var pairs: [(name: String, value: String)] = [("Content-Type", "application/json")]
        pairs += request.query.filter { $0.name.lowercased() != "content-type" && $0.name.lowercased() != "content-length" }
        if let type = request.query.last(where: { $0.name.lowercased() == "content-type" }) {
            pairs[0].value = type.value
        }
        var length = 0
        var body: [UInt8] = []
        for _ in 0..<10 {
            var json = pairs
            json.append(("Content-Length", String(length)))
            body = JSONNode.grouped(json).encoded
            if body.count == length { break }
            length = body.count
        }
        var headers = HTTPHeaders(pairs.map { ($0.name, $0.value) })
        headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
        return .full(status: .ok, headers: headers, body: body)
    }
}
