import NIOHTTP1

/// `/range/{n}`: a resource of `n` bytes (`abc…xyzabc…`) served with byte ranges
/// (RFC 9110 §14): `Accept-Ranges`, a strong `ETag` and a fixed `Last-Modified`; a single
/// satisfiable `Range` gets 206 with `Content-Range`, an unsatisfiable one 416, and an
/// `If-Range` that matches neither validator gets the whole resource with 200.
///
/// Query modes for resume tests (a hostile or changed server):
/// - `etag=X`: the resource's ETag is `"X"` (another version of it).
/// - `start_shift=K`: a 206 sends the range from K bytes after the requested first byte, with a
///   `Content-Range` saying so (a range that does not start where it was asked).
/// - `lie=open`: a 206 with `Content-Range: bytes <first>-*/*` and `Content-Length: 2^63-1`,
///   then a few bytes and a stall.
/// - `lie=total`: a 206 whose `Content-Range` states a complete length 1000 bytes larger.
/// - `reset_after=K`: the head with the full `Content-Length`, K bytes of the body, then a
///   connection reset (an interrupted download).
/// - `partial_without_range=K`: a request without `Range` (which must get 200) gets a 206
///   with the first K bytes and `Content-Range: bytes 0-<K-1>/<n>` (RFC 9110 forbids a 206
///   that answers no range request).
enum RangeRequests {
    /// httpbin's limit.
    static let maximumSize = 100 * 1024
    /// The resource's `Last-Modified`, fixed so that clients can send it back in `If-Range`.
    static let lastModified = "Sat, 01 Jan 2000 00:00:00 GMT"

    /// A byte range resolved against a resource length: `first...last`, both inclusive.
    struct ByteRange: Equatable {
        var first: Int
        var last: Int
    }

    /// How a `Range` header applies to a resource.
    enum Resolution: Equatable {
        /// No usable range: send the whole resource (no header, another unit, bad syntax,
        /// several ranges).
        case whole
        /// One satisfiable range.
        case partial(ByteRange)
        /// A syntactically valid range that selects no byte of the resource.
        case unsatisfiable
    }

    /// The `/range/{n}` endpoint. Query: `chunk_size` (default 10240) and `duration` (seconds
    /// over which the body is paced, default 0).
    static func range(_ request: ServerRequest, size: String) -> ServerReply {
        let etag = request.queryValue("etag").map { "\"\($0)\"" } ?? "\"range\(size)\""
        guard let size = Int(size), size > 0, size <= maximumSize else {
            return .text(
                "number of bytes must be in the range (0, \(maximumSize)]",
                status: .notFound,
                headers: ["ETag": etag, "Accept-Ranges": "bytes"]
            )
        }
        var headers: HTTPHeaders = [
            "Content-Type": "application/octet-stream",
            "ETag": etag,
            "Last-Modified": lastModified,
            "Accept-Ranges": "bytes",
        ]
        var resolution = resolve(request.headers.first(name: "range"), size: size)
        if let condition = request.headers.first(name: "if-range"), !ifRangeMatches(condition, etag: etag) {
            resolution = .whole
        }

        let status: HTTPResponseStatus
        let range: ByteRange
        switch resolution {
        case .whole:
            if request.headers.first(name: "range") == nil,
                let count = request.queryValue("partial_without_range").flatMap({ Int($0) }), count > 0
            {
                status = .partialContent
                range = ByteRange(first: 0, last: min(count, size) - 1)
                headers.add(name: "Content-Range", value: "bytes 0-\(range.last)/\(size)")
            } else {
                status = .ok
                range = ByteRange(first: 0, last: size - 1)
            }
        case .partial(var selected):
            status = .partialContent
            if let shift = request.queryValue("start_shift").flatMap({ Int($0) }) {
                selected.first = min(max(0, selected.first + shift), selected.last)
            }
            range = selected
            switch request.queryValue("lie") {
            case "open":
                return .raw([
                    .write(Array(("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(selected.first)-*/*\r\n"
                        + "Content-Length: \(Int64.max)\r\nETag: \(etag)\r\n\r\nabcdefgh").utf8)),
                    .stall,
                ])
            case "total":
                headers.add(name: "Content-Range", value: "bytes \(selected.first)-\(selected.last)/\(size + 1000)")
            default:
                headers.add(name: "Content-Range", value: "bytes \(selected.first)-\(selected.last)/\(size)")
            }
        case .unsatisfiable:
            headers.remove(name: "Content-Type")
            headers.add(name: "Content-Range", value: "bytes */\(size)")
            return .full(status: .rangeNotSatisfiable, headers: headers, body: [])
        }

        let body = (range.first...range.last).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        headers.add(name: "Content-Length", value: String(body.count))
        if let cut = request.queryValue("reset_after").flatMap({ Int($0) }) {
            var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            return .raw([.write(Array((head + "\r\n").utf8) + body.prefix(max(0, cut))), .wait(.milliseconds(50)), .reset])
        }
        let chunkSize = max(1, request.queryValue("chunk_size").flatMap { Int($0) } ?? 10 * 1024)
        let duration = request.queryValue("duration").flatMap(Double.init).map { min(max($0, 0), 600) } ?? 0
        let chunks = DynamicDataEndpoints.chunked(body, size: chunkSize)
        let interval = chunks.isEmpty ? 0 : duration * Double(chunkSize) / Double(size)
        return .streamed(
            status: status,
            headers: headers,
            chunks: chunks,
            initialDelay: .zero,
            interval: DynamicDataEndpoints.seconds(interval.isFinite ? interval : 0)
        )
    }

    /// Applies a `Range` header value to a resource of `size` bytes.
    static func resolve(_ header: String?, size: Int) -> Resolution {
        guard let header else { return .whole }
        let trimmed = header.trimmingASCIIWhitespace()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = trimmed.dropFirst("bytes=".count).trimmingASCIIWhitespace()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let firstText = spec[..<dash].trimmingASCIIWhitespace()
        let lastText = spec[spec.index(after: dash)...].trimmingASCIIWhitespace()
        let isDigits: (String) -> Bool = { !$0.isEmpty && $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }

        if firstText.isEmpty {
            // Suffix range: the last N bytes.
            guard isDigits(lastText) else { return .whole }
            guard let suffix = Int(lastText), suffix > 0 else { return .unsatisfiable }
            return .partial(ByteRange(first: max(0, size - suffix), last: size - 1))
        }
        guard isDigits(firstText) else { return .whole }
        guard let first = Int(firstText), first < size else { return .unsatisfiable }
        if lastText.isEmpty {
            return .partial(ByteRange(first: first, last: size - 1))
        }
        guard isDigits(lastText) else { return .whole }
        let last = Int(lastText) ?? Int.max
        guard last >= first else { return .whole }
        return .partial(ByteRange(first: first, last: min(last, size - 1)))
    }

    /// `If-Range` holds when it is the current strong entity tag or exactly the `Last-Modified` date.
    static func ifRangeMatches(_ condition: String, etag: String) -> Bool {
        let condition = condition.trimmingASCIIWhitespace()
        if condition.hasPrefix("W/") { return false }
        if condition.hasPrefix("\"") { return condition == etag }
        return condition == lastModified
    }
}
