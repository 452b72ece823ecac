import Foundation
import NIOHTTP1
import Synchronization

/// `/retry/{key}` and `/bearer/{token}`: endpoints for retry and token-refresh tests.
///
/// `/retry/{key}?fail=N&status=503&retry_after=V&mode=close` (any method): the first `N`
/// requests for `key` fail (default 1), with the body `failing attempt {n} of {key}`: with
/// `status` (default 503) and, when given, a
/// `Retry-After: V` header (`V` as written, or `date:S` for an HTTP-date `S` seconds ahead),
/// or with `mode=close`, by closing the connection before any byte of a response. Later
/// requests get 200 `{"attempts": n, "arrivals": [seconds...], "method": "GET"}`: every
/// arrival time for the key, in seconds of the server's monotonic clock, so a test measures
/// the delays between attempts on the server's side. Keys are per server.
///
/// `/bearer/{token}` (any method): 200 `{"token"}` for `Authorization: Bearer {token}` exactly,
/// else 401 with `WWW-Authenticate: Bearer`.
final class RetryEndpoints: Sendable {
    private let arrivals = Mutex<[String: [Double]]>([:])
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant

    init() { start = clock.now }

    func retry(_ request: ServerRequest, key: String) -> ServerReply {
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let times = arrivals.withLock { table -> [Double] in
            table[key, default: []].append(seconds)
            return table[key] ?? []
        }
        let query = Dictionary(request.query.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        let fail = query["fail"].flatMap(Int.init) ?? 1
        if times.count <= fail {
            if query["mode"] == "close" { return .raw([.close]) }
            let code = query["status"].flatMap(Int.init).flatMap { (100..<600).contains($0) ? $0 : nil } ?? 503
            var headers: HTTPHeaders = [:]
            if let retryAfter = query["retry_after"] {
                if retryAfter.hasPrefix("date:"), let ahead = Double(retryAfter.dropFirst(5)) {
                    headers.add(name: "Retry-After", value: CacheEndpoints.httpDate(Date().addingTimeInterval(ahead)))
                } else {
                    headers.add(name: "Retry-After", value: retryAfter)
                }
            }
            return .text("failing attempt \(times.count) of \(key)", status: HTTPResponseStatus(statusCode: code), headers: headers)
        }
        return .json([
            "attempts": .int(times.count), "arrivals": .array(times.map { .double($0) }),
            "method": .string(request.method.rawValue),
            "authorization": request.headers.first(name: "authorization").map(JSONNode.string) ?? .null,
        ])
    }

    static func bearer(_ request: ServerRequest, token: String) -> ServerReply {
        guard request.headers.first(name: "authorization") == "Bearer \(token)" else {
            return .empty(.unauthorized, headers: ["WWW-Authenticate": "Bearer"])
        }
        return .json(["token": .string(token)])
    }
}
