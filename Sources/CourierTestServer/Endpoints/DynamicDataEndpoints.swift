import NIOCore
import NIOHTTP1

/// httpbin's generated-data endpoints: random bytes, streams, paced bodies and delays.
enum DynamicDataEndpoints {
    /// httpbin's limit for `/bytes` and `/stream-bytes`.
    static let maximumRandomBytes = 100 * 1024

    /// `/bytes/{n}?seed=`: `n` (at most 100 KiB) random bytes, reproducible with a seed.
    static func bytes(_ request: ServerRequest, count: String) -> ServerReply {
        guard let count = Int(count), count >= 0 else { return .notFound }
        let bytes = randomBytes(min(count, maximumRandomBytes), seed: request.queryValue("seed"))
        return .full(status: .ok, headers: ["Content-Type": "application/octet-stream"], body: bytes)
    }

    /// `/stream-bytes/{n}?seed=&chunk_size=`: like `/bytes`, sent with chunked transfer coding
    /// in chunks of `chunk_size` (default 10240) bytes.
    static func streamBytes(_ request: ServerRequest, count: String) -> ServerReply {
        guard let count = Int(count), count >= 0 else { return .notFound }
        let chunkSize = max(1, request.queryValue("chunk_size").flatMap { Int($0) } ?? 10 * 1024)
        let bytes = randomBytes(min(count, maximumRandomBytes), seed: request.queryValue("seed"))
        return .streamed(
            status: .ok,
            headers: ["Content-Type": "application/octet-stream"],
            chunks: chunked(bytes, size: chunkSize),
            initialDelay: .zero,
            interval: .zero
        )
    }

    /// `/stream/{n}`: `n` (at most 100) JSON documents, one per line, each the `/get`
    /// dictionary plus an `id`, sent chunked.
    static func stream(_ request: ServerRequest, count: String) -> ServerReply {
        guard let count = Int(count), count >= 0 else { return .notFound }
        let base = HTTPBinEndpoints.dictionary(request, HTTPBinEndpoints.getFields)
        let lines: [[UInt8]] = (0..<min(count, 100)).map { id in
            var line = base
            line["id"] = .int(id)
            return JSONNode.object(line).compactEncoded + [UInt8(ascii: "\n")]
        }
        return .streamed(status: .ok, headers: ["Content-Type": "application/json"], chunks: lines, initialDelay: .zero, interval: .zero)
    }

    /// `/drip?duration=2&numbytes=10&code=200&delay=0`: after `delay` seconds, `numbytes`
    /// asterisks spread over `duration` seconds, with `Content-Length`, status `code`.
    /// Large counts are sent in at most 1000 steps.
    static func drip(_ request: ServerRequest) -> ServerReply {
        let duration = request.queryValue("duration").flatMap(Double.init) ?? 2
        let count = min(request.queryValue("numbytes").flatMap { Int($0) } ?? 10, 10 * 1024 * 1024)
        let code = request.queryValue("code").flatMap { Int($0) } ?? 200
        let delay = request.queryValue("delay").flatMap(Double.init) ?? 0
        guard count > 0 else { return .text("number of bytes must be positive", status: .badRequest) }
        guard (200..<600).contains(code), duration.isFinite, duration >= 0, delay.isFinite, delay >= 0 else {
            return .text("Invalid drip parameters", status: .badRequest)
        }
        let steps = min(count, 1000)
        let chunks: [[UInt8]] = (0..<steps).map { step in
            let size = count / steps + (step < count % steps ? 1 : 0)
            return [UInt8](repeating: UInt8(ascii: "*"), count: size)
        }
        return .streamed(
            status: HTTPResponseStatus(statusCode: code),
            headers: ["Content-Type": "application/octet-stream", "Content-Length": String(count)],
            chunks: chunks,
            initialDelay: seconds(min(delay, 600)),
            interval: seconds(min(duration, 600) / Double(steps))
        )
    }

    /// `/delay/{s}` (any method): the request dictionary, after `s` seconds (at most 10).
    static func delay(_ request: ServerRequest, seconds value: String) -> ServerReply {
        guard let value = Double(value), value.isFinite else { return .notFound }
        let fields: [HTTPBinEndpoints.Field] = [.url, .args, .form, .data, .origin, .headers, .files]
        return .delayed(seconds(min(max(value, 0), 10)), .json(.object(HTTPBinEndpoints.dictionary(request, fields))))
    }

    /// Random bytes, seeded like httpbin when `seed` is an integer.
    static func randomBytes(_ count: Int, seed: String?) -> [UInt8] {
        if let seed, let value = Int64(seed) {
            var generator = SeededRandom(seed: value.magnitude)
            return generator.bytes(count)
        }
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func chunked(_ bytes: [UInt8], size: Int) -> [[UInt8]] {
        stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
    }

    static func seconds(_ value: Double) -> TimeAmount {
        .nanoseconds(Int64(value * 1_000_000_000))
    }

    /// `/download/{n}`: `n` bytes (up to 16 GiB) of the `abc…xyz` pattern (byte `i` is
    /// `a + i % 26`), with `Content-Length`, generated while sent and paced by the reader:
    /// for large-download tests and benchmarks. Not part of httpbin.
    static func download(_ request: ServerRequest, count: String) -> ServerReply {
        guard let length = Int(count), length >= 0, length <= 16 << 30 else {
            return .text("expected a byte count between 0 and 16 GiB\n", status: .badRequest)
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/octet-stream")
        return .generated(status: .ok, headers: headers, length: length)
    }
}
