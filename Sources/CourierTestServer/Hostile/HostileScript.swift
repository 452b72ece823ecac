import CompressNIO
import NIOCore
import Synchronization

/// One step of what a ``HostileServer`` does on a connection, in order.
public enum HostileStep: Sendable, Equatable {
    /// Waits until the request head (up to and including the blank line) has arrived, and
    /// records it in ``HostileServer/requestHeads``. A connection closed first ends the script.
    case readHead
    /// Waits for the request body the last head announced: `Content-Length` bytes, or chunks
    /// up to the last chunk and its trailer. Nothing when the head announced no body.
    case readBody
    /// Writes these bytes as they are (no framing, no validation) and flushes them.
    case write([UInt8])
    /// Waits this many milliseconds.
    case sleep(milliseconds: Int64)
    /// Never goes on: the connection stays open, silent, until the client closes it or the
    /// server shuts down.
    case stall
    /// Closes with `SO_LINGER` 0, so the client gets a TCP reset (over TLS, NIOSSL sends its
    /// close_notify first, so a client sees a clean close rather than the reset).
    case reset
    /// Closes the server's writing half (a FIN, or a close_notify over TLS) and keeps reading.
    case halfClose
    /// Closes the connection normally.
    case close
}

/// What a ``HostileServer`` does on every connection it accepts: ``steps``, in order; then,
/// unless a step ended the connection, ``afterwards``.
public struct HostileScript: Sendable {
    /// What to do when the steps are done.
    public enum Ending: Sendable, Equatable {
        /// Close the connection (default).
        case close
        /// Start the steps again for the next request on the same connection (keep-alive).
        case repeatSteps
        /// Leave the connection open and silent.
        case stall
    }

    /// The steps of one connection.
    public var steps: [HostileStep]
    /// What follows the last step; default ``Ending/close``.
    public var afterwards: Ending

    /// Creates a script; `afterwards` defaults to closing the connection.
    public init(_ steps: [HostileStep], afterwards: Ending = .close) {
        self.steps = steps
        self.afterwards = afterwards
    }
}

extension HostileStep {
    /// Writes `text` as UTF-8, as it is (write `\r\n` yourself).
    public static func write(_ text: String) -> HostileStep { .write(Array(text.utf8)) }

    /// A status line, the given header lines (`"Name: value"`) and the blank line.
    public static func head(_ status: String = "200 OK", _ headers: [String]) -> HostileStep {
        .write("HTTP/1.1 \(status)\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n")
    }

    /// `count` informational heads (`100 Continue`, or `103 Early Hints` with a `Link`), as one write.
    public static func informationalStorm(count: Int, status: Int = 100) -> HostileStep {
        let one = status == 103 ? "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" : "HTTP/1.1 \(status) Continue\r\n\r\n"
        return .write(String(repeating: one, count: max(0, count)))
    }
}

extension HostileScript {
    /// A complete, valid `200 OK` with `body` and its `Content-Length`.
    public static func ok(_ body: String = "ok") -> HostileScript {
        HostileScript([.readHead, .readBody, .head("200 OK", ["Content-Length: \(body.utf8.count)"]), .write(body)])
    }

    /// Reads the request, then answers a head with `headers` and writes `body`, then `ending`
    /// (default: close).
    public static func answer(
        status: String = "200 OK", headers: [String], body: String = "", readsBody: Bool = true,
        afterwards: Ending = .close
    ) -> HostileScript {
        HostileScript(
            (readsBody ? [.readHead, .readBody] : [.readHead]) + [.head(status, headers), .write(body)],
            afterwards: afterwards)
    }

    /// A head claiming `claimed` body bytes, `sent` bytes of body, then `ending`.
    public static func lyingContentLength(claimed: String, sent: Int, afterwards: Ending = .close) -> HostileScript {
        answer(headers: ["Content-Length: \(claimed)"], body: String(repeating: "x", count: max(0, sent)), afterwards: afterwards)
    }

    /// The first `size` bytes of zeros, gzip-compressed, with `Content-Encoding: gzip` and the
    /// compressed length. 64 MiB of zeros compresses about 1000:1.
    public static func gzipBomb(decompressedSize: Int = 64 << 20) -> HostileScript {
        let body = HostileBodies.gzippedZeros(decompressedSize)
        return HostileScript([
            .readHead, .readBody,
            .head("200 OK", ["Content-Encoding: gzip", "Content-Type: application/octet-stream", "Content-Length: \(body.count)"]),
            .write(body),
        ])
    }
}

/// Bodies made once per process.
enum HostileBodies {
    private static let cache = Mutex<[Int: [UInt8]]>([:])

    /// `size` zero bytes, gzip-compressed (an empty array if compression fails, which then
    /// shows up as a broken body).
    static func gzippedZeros(_ size: Int) -> [UInt8] {
        if let cached = cache.withLock({ $0[size] }) { return cached }
        var zeros = ByteBufferAllocator().buffer(capacity: size)
        zeros.writeRepeatingByte(0, count: size)
        let compressed = (try? zeros.compress(with: .gzip())).map { Array($0.readableBytesView) } ?? []
        cache.withLock { $0[size] = compressed }
        return compressed
    }
}
