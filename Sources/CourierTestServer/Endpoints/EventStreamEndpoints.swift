import NIOCore
import NIOHTTP1
import Synchronization

/// `/sse/{key}`: a server-sent event stream (`text/event-stream`) that resumes from
/// `Last-Event-ID`, for tests of reconnecting clients. Keys are per server.
///
/// Events are numbered 1...`count`: `id: n`, `data: event n`. A request starts after the
/// number its `Last-Event-ID` names (from 1 without one) and sends up to `per` of the events
/// left; once none is left it answers `204 No Content` (the standard's "stop reconnecting").
/// Query parameters:
/// - `count=N` (default 5), `per=M` events per connection (default all that are left);
/// - `end=close` (default): after its events the response ends normally (the chunked body's
///   last chunk); `end=drop`: it sends half of the next event (`id:` and `data:` without the
///   blank line) and resets the connection;
/// - `retry=MS`: each response starts with `retry: MS`;
/// - `interval=MS` between events (default 0);
/// - `fail=K&status=503&retry_after=V`: the first `K` requests for the key answer `status`
///   (default 503), with `Retry-After: V` when given;
/// - `answer=204|404|html`: every request answers `204`, a `404`, or `200` with `text/html`.
///
/// `/sse/{key}/log`: `{"requests": n, "last_event_ids": [...]}`, the `Last-Event-ID` each
/// request for the key sent (`""` for none), in order.
final class EventStreamEndpoints: Sendable {
    private let requests = Mutex<[String: [String]]>([:])

    func stream(_ request: ServerRequest, key: String) -> ServerReply {
        let lastEventID = request.headers.first(name: "last-event-id")
        let arrivals = requests.withLock { table -> Int in
            table[key, default: []].append(lastEventID ?? "")
            return table[key]?.count ?? 0
        }
        switch request.queryValue("answer") {
        case "204": return .empty(.noContent)
        case "404": return .notFound
        case "html": return .text("<p>not an event stream</p>", contentType: "text/html; charset=utf-8")
        default: break
        }
        let fail = request.intQuery("fail", default: 0, range: 0...1_000)
        if arrivals <= fail {
            let code = request.intQuery("status", default: 503, range: 100...599)
            var headers: HTTPHeaders = [:]
            if let retryAfter = request.queryValue("retry_after") { headers.add(name: "Retry-After", value: retryAfter) }
            return .text("failing attempt \(arrivals) of \(key)", status: HTTPResponseStatus(statusCode: code), headers: headers)
        }
        let count = request.intQuery("count", default: 5, range: 0...100_000)
        let first = (lastEventID.flatMap { Int($0) } ?? 0) + 1
        guard first <= count else { return .empty(.noContent) }
        let per = request.intQuery("per", default: count, range: 1...100_000)
        let last = min(count, first + per - 1)
        var chunks: [[UInt8]] = []
        if let retry = request.queryValue("retry").flatMap({ Int($0) }) { chunks.append(Array("retry: \(retry)\n\n".utf8)) }
        for number in first...last { chunks.append(Array("id: \(number)\ndata: event \(number)\n\n".utf8)) }
        let interval = TimeAmount.milliseconds(Int64(request.intQuery("interval", default: 0, range: 0...60_000)))
        let headers: HTTPHeaders = ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"]
        guard request.queryValue("end") == "drop" else {
            return .streamed(status: .ok, headers: headers, chunks: chunks, initialDelay: .zero, interval: interval)
        }
        // Raw: a chunked body that never gets its last chunk, cut by a reset.
        var steps: [RawStep] = [
            .write(FaultEndpoints.head(["Content-Type: text/event-stream", "Cache-Control: no-cache", "Transfer-Encoding: chunked"]))
        ]
        let partial = Array("id: \(last + 1)\ndata: partial event \(last + 1)\n".utf8)
        for chunk in chunks + [partial] {
            steps.append(.write(Array(String(chunk.count, radix: 16).utf8) + Array("\r\n".utf8) + chunk + Array("\r\n".utf8)))
            if interval > .zero { steps.append(.wait(interval)) }
        }
        steps += [.wait(.milliseconds(50)), .reset]
        return .raw(steps)
    }

    func log(key: String) -> ServerReply {
        let ids = requests.withLock { $0[key] ?? [] }
        return .json(["requests": .int(ids.count), "last_event_ids": .array(ids.map { .string($0) })])
    }
}
