public import Foundation
public import NIOCore
public import NIOHTTP1

/// One HTTP request for ``HTTPEngine``: method, URL, headers and body, sent as given.
///
/// The URL's path and query go on the wire exactly as written (no re-encoding). `Host`,
/// `Content-Length` and `Transfer-Encoding` are set by the engine from the URL and the body;
/// the caller's values for those are replaced.
public struct EngineRequest: Sendable {
    /// The method, e.g. `GET`. Must be an HTTP token.
    public var method: String
    /// An `http` or `https` URL.
    public var url: URL
    /// Headers in order. Names and values with CR, LF or NUL are rejected.
    public var headers: HTTPHeaders
    /// The body, or nil for none.
    public var body: RequestBody?
    /// Overrides the engine's idle timeout for this request.
    public var idleTimeout: TimeAmount?
    /// A total deadline for this request (connection, upload and download).
    public var deadline: NIODeadline?
    /// Whether the engine reports ``EngineEvent/metricsUpdated(_:)`` as the exchange moves on
    /// (a connection acquired, the request sent, the response head arrived), for callers that
    /// turn them into phase events. Off by default: nothing is built or delivered then.
    public var reportsMetricsUpdates = false

    /// Creates a request.
    public init(
        method: String = "GET",
        url: URL,
        headers: HTTPHeaders = [:],
        body: RequestBody? = nil,
        idleTimeout: TimeAmount? = nil,
        deadline: NIODeadline? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.idleTimeout = idleTimeout
        self.deadline = deadline
    }

    /// Whether the engine may resend this request once on a fresh connection when a reused one
    /// turns out to be dead before any response byte arrived: an idempotent method (RFC 9110
    /// §9.2.2), or any method carrying an `Idempotency-Key` (the server deduplicates it), with
    /// a body that can be sent again.
    var isIdempotent: Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": return body?.isReplayable ?? true
        default: return headers.contains(name: "Idempotency-Key") && (body?.isReplayable ?? true)
        }
    }

    /// Whether the request carries `Expect: 100-continue`.
    var expectsContinue: Bool {
        headers[canonicalForm: "expect"].contains { $0.lowercased() == "100-continue" }
    }
}

/// A request body: bytes, a file streamed from disk, or chunks produced asynchronously.
public struct RequestBody: Sendable {
    enum Storage: Sendable {
        case bytes(ByteBuffer)
        case file(path: String, offset: Int64, length: Int64?)
        case stream(length: Int64?, produce: @Sendable (BodyWriter) async throws -> Void)
    }

    let storage: Storage

    /// A body held in memory.
    public static func bytes(_ buffer: ByteBuffer) -> RequestBody {
        RequestBody(storage: .bytes(buffer))
    }

    /// A body held in memory.
    public static func data(_ data: Data) -> RequestBody {
        RequestBody(storage: .bytes(ByteBuffer(bytes: data)))
    }

    /// A body read from a file as it is sent (never loaded whole). `length` nil sends from
    /// `offset` to the end of the file. A missing or unreadable file fails the request with
    /// ``EngineError/invalidBody(_:)``; so does one replaced or changed between the request's
    /// start and the moment a connection sends it (its length was measured at the start; a
    /// request waiting for a connection holds no descriptor of it), and a path that names
    /// anything but a regular file (a FIFO, a device, a directory), which is never opened, and
    /// an `offset` past the end or a `length` running past it (before anything is sent). A
    /// symbolic link is followed.
    public static func file(path: String, offset: Int64 = 0, length: Int64? = nil) -> RequestBody {
        RequestBody(storage: .file(path: path, offset: offset, length: length))
    }

    /// A body written chunk by chunk by `produce`. Each `write` waits while the connection is
    /// not writable, so memory stays bounded. With a `length`, the request carries
    /// `Content-Length` and writing more or fewer bytes fails; without, it is sent chunked. A
    /// negative `length` fails the request before anything is sent
    /// (``EngineError/invalidBody(_:)``).
    public static func stream(
        length: Int64?,
        _ produce: @escaping @Sendable (BodyWriter) async throws -> Void
    ) -> RequestBody {
        RequestBody(storage: .stream(length: length, produce: produce))
    }

    /// A body made of an async sequence's chunks.
    public static func sequence<S: AsyncSequence & Sendable>(
        _ sequence: S,
        length: Int64?
    ) -> RequestBody where S.Element == ByteBuffer {
        .stream(length: length) { writer in
            for try await chunk in sequence {
                try await writer.write(chunk)
            }
        }
    }

    /// The byte count when known before sending (nil for a stream of unknown length, an
    /// unreadable file, or a negative offset or length).
    public var expectedLength: Int64? { knownLength }

    /// The byte count when known before sending.
    var knownLength: Int64? {
        switch storage {
        case .bytes(let buffer): return Int64(buffer.readableBytes)
        case .file(let path, let offset, let length):
            // A negative length or offset is no length (the engine refuses the request).
            if let length { return length >= 0 ? length : nil }
            // Through a symbolic link: the file's size, not the link's (see FileStatus). A
            // negative offset has no length (the engine refuses it); one past the end leaves 0.
            guard offset >= 0, case .regular(let size) = FileStatus(path: path) else { return nil }
            return offset >= size ? 0 : size - offset
        case .stream(let length, _): return length.flatMap { $0 >= 0 ? $0 : nil }
        }
    }

    /// Whether the body can be sent again as is (bytes and files can; a stream was consumed).
    public var isReplayable: Bool {
        if case .stream = storage { return false }
        return true
    }
}

/// Writes the chunks of a streamed request body, waiting while the connection is not writable.
public struct BodyWriter: Sendable {
    let writeChunk: @Sendable (ByteBuffer) async throws -> Void

    /// Sends one chunk; suspends until the connection can take more. Throws when the request
    /// has failed or was cancelled.
    public func write(_ chunk: ByteBuffer) async throws {
        try await writeChunk(chunk)
    }
}
