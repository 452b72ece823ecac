import NIOCore

/// Endpoints that misbehave on purpose, below HTTP's rules, so that clients can be tested
/// against broken servers. Each writes raw bytes past NIO's response encoder (see
/// `RawWriter`) and then closes, resets or stalls the connection. A stalled connection stays
/// open until the client gives up or the server shuts down.
///
/// The bodies they send are runs of `abc…xyz` (`pattern(_:)`), so a client can check what it got.
enum FaultEndpoints {
    /// The most body bytes a fault endpoint writes (they are built in memory): 16 MiB.
    static let maximumSent = 16 * 1024 * 1024

    /// `/fault/short-body?length=1000&sent=500`: announces `Content-Length: length`, sends
    /// `sent` bytes, then closes (FIN). A client must report a truncated body.
    static func shortBody(_ request: ServerRequest) -> ServerReply {
        let length = request.intQuery("length", default: 1000, range: 1...100_000_000)
        let sent = request.intQuery("sent", default: length / 2, range: 0...min(max(0, length - 1), maximumSent))
        return .raw([
            .write(head(["Content-Type: text/plain", "Content-Length: \(length)", "Connection: close"]) + pattern(sent)),
            .close,
        ])
    }

    /// `/fault/reset-mid-body?length=100000&sent=1000`: announces `length` bytes, sends `sent`,
    /// waits 100 ms (so they reach the client) and resets the connection (RST, via
    /// `SO_LINGER {1, 0}`). A client must report a lost connection.
    static func resetMidBody(_ request: ServerRequest) -> ServerReply {
        let length = request.intQuery("length", default: 100_000, range: 1...100_000_000)
        let sent = request.intQuery("sent", default: min(1000, length - 1), range: 0...min(max(0, length - 1), maximumSent))
        return .raw([
            .write(head(["Content-Type: text/plain", "Content-Length: \(length)"]) + pattern(sent)),
            .wait(.milliseconds(100)),
            .reset,
        ])
    }

    /// `/fault/incomplete-headers`: sends a status line and part of a header block, never the
    /// blank line that ends it, and keeps the connection open. A client must time out.
    static func incompleteHeaders() -> ServerReply {
        .raw([.write(Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Le".utf8)), .stall])
    }

    /// `/fault/stall-body/{n}`: announces `2n + 1` bytes, sends `n` (at most 16 MiB), then nothing
    /// more, keeping the connection open. A client must time out while reading the body.
    static func stallBody(count: String) -> ServerReply {
        guard let count = Int(count), count >= 0, count <= maximumSent else { return .notFound }
        return .raw([
            .write(head(["Content-Type: text/plain", "Content-Length: \(2 * count + 1)"]) + pattern(count)),
            .stall,
        ])
    }

    /// `/fault/bad-chunked`: `Transfer-Encoding: chunked` with one good chunk (`hello`), then a
    /// chunk-size line that is not hexadecimal (`zz`), then close. A client must report a
    /// malformed body.
    static func badChunked() -> ServerReply {
        .raw([
            .write(head(["Content-Type: text/plain", "Transfer-Encoding: chunked"]) + Array("5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n".utf8)),
            .close,
        ])
    }

    /// `/fault/close-delimited?bytes=10000&version=1.0`: a response with neither
    /// `Content-Length` nor chunking whose body, `bytes` bytes of `pattern`, ends when the
    /// server closes the connection (RFC 9112 §6.3 rule 8). Status line `HTTP/1.0` (default)
    /// or `HTTP/1.1`.
    static func closeDelimited(_ request: ServerRequest) -> ServerReply {
        let count = request.intQuery("bytes", default: 10_000, range: 0...maximumSent)
        let version = request.queryValue("version") == "1.1" ? "HTTP/1.1" : "HTTP/1.0"
        return .raw([
            .write(head(["Content-Type: text/plain", "Connection: close"], statusLine: "\(version) 200 OK") + pattern(count)),
            .close,
        ])
    }

    /// `/fault/huge-headers?kib=1024`: a header block of more than `kib` KiB (default 1 MiB) in
    /// 1 KiB `X-Filler-N` lines, then the body `ok`, then close. A client should refuse it.
    static func hugeHeaders(_ request: ServerRequest) -> ServerReply {
        let kibibytes = request.intQuery("kib", default: 1024, range: 1...64 * 1024)
        var lines = ["Content-Type: text/plain", "Content-Length: 2", "Connection: close"]
        for index in 0..<kibibytes {
            // Each line, CRLF included, is exactly 1 KiB.
            let name = "X-Filler-\(index): "
            lines.append(name + String(repeating: "a", count: 1024 - 2 - name.utf8.count))
        }
        return .raw([.write(head(lines) + Array("ok".utf8)), .close])
    }

    /// `/fault/continue`: `100 Continue` (whether or not the client asked), then the `/anything`
    /// response. A client must skip the interim response.
    static func `continue`(_ request: ServerRequest) -> ServerReply {
        .continueFirst(HTTPBinEndpoints.anything(request))
    }

    /// `/fault/redirect-loop`: 302 to itself, forever. A client must stop after its limit.
    static func redirectLoop() -> ServerReply {
        .redirect(to: "/fault/redirect-loop")
    }

    /// `/fault/no-response`: reads the request and never answers; the connection stays open.
    /// A client must time out.
    static func noResponse() -> ServerReply {
        .raw([.stall])
    }

    /// `count` bytes of `abcdefghijklmnopqrstuvwxyz` repeated (the byte at offset `i` is
    /// `a` + `i % 26`, as in `/range/{n}`).
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }
    }

    /// A status line and header lines with CRLFs, ending with the blank line.
    static func head(_ lines: [String], statusLine: String = "HTTP/1.1 200 OK") -> [UInt8] {
        Array(([statusLine] + lines).map { $0 + "\r\n" }.joined().utf8) + Array("\r\n".utf8)
    }
}

extension ServerRequest {
    /// Integer query parameter `name`, clamped to `range`; `fallback` when absent or not a number.
    func intQuery(_ name: String, default fallback: Int, range: ClosedRange<Int>) -> Int {
        let value = self.queryValue(name).flatMap { Int($0) } ?? fallback
        return min(max(value, range.lowerBound), range.upperBound)
    }
}
