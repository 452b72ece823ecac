import NIOCore
import NIOHTTP1

/// What an endpoint answers, as a value; `HTTPConnectionHandler` carries it out on the wire.
///
/// Endpoints never touch the channel: they return one of these, which keeps them plain
/// functions from a request to a reply.
indirect enum ServerReply {
    /// A complete response; `Content-Length` is added from the body.
    case full(status: HTTPResponseStatus, headers: HTTPHeaders, body: [UInt8])
    /// A response whose body goes out in `chunks`, `interval` apart, after `initialDelay`.
    /// Chunked transfer coding unless `headers` carry a `Content-Length`.
    case streamed(
        status: HTTPResponseStatus,
        headers: HTTPHeaders,
        chunks: [[UInt8]],
        initialDelay: TimeAmount,
        interval: TimeAmount
    )
    /// A body of `length` bytes of the `abc…xyz` pattern, generated as it is sent and written
    /// only while the connection is writable (a slow reader is never buffered for): for large
    /// downloads without memory growth. `Content-Length` is set.
    case generated(status: HTTPResponseStatus, headers: HTTPHeaders, length: Int)
    /// `reply`, sent after `delay`.
    case delayed(TimeAmount, ServerReply)
    /// An interim `100 Continue` (sent even if the client did not ask for it), then `reply`.
    case continueFirst(ServerReply)
    /// Raw bytes and socket actions that bypass the HTTP encoder (fault endpoints).
    case raw([RawStep])
    /// A WebSocket handshake's answer (`response`, the raw `101`), after which the connection
    /// speaks WebSocket frames as `endpoint` says.
    case webSocket(response: [UInt8], WebSocketEndpoint)

    /// A JSON body with `Content-Type: application/json`.
    static func json(_ value: JSONNode, status: HTTPResponseStatus = .ok, headers: HTTPHeaders = [:]) -> ServerReply {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        return .full(status: status, headers: headers, body: value.encoded)
    }

    /// A body of `text` with the given content type.
    static func text(
        _ text: String,
        status: HTTPResponseStatus = .ok,
        contentType: String = "text/plain; charset=utf-8",
        headers: HTTPHeaders = [:]
    ) -> ServerReply {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: contentType)
        return .full(status: status, headers: headers, body: Array(text.utf8))
    }

    /// An empty body.
    static func empty(_ status: HTTPResponseStatus, headers: HTTPHeaders = [:]) -> ServerReply {
        .full(status: status, headers: headers, body: [])
    }

    /// A redirect to `location`.
    static func redirect(to location: String, status: HTTPResponseStatus = .found) -> ServerReply {
        .full(status: status, headers: ["Location": location, "Content-Type": "text/html; charset=utf-8"], body: [])
    }

    /// httpbin's 404 page.
    static var notFound: ServerReply {
        .text(
            "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 3.2 Final//EN\">\n<title>404 Not Found</title>\n"
                + "<h1>Not Found</h1>\n<p>The requested URL was not found on the server.</p>\n",
            status: .notFound,
            contentType: "text/html; charset=utf-8"
        )
    }

    /// httpbin's 405 page, with the methods that are allowed.
    static func methodNotAllowed(allowed: [HTTPMethod]) -> ServerReply {
        .text(
            "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 3.2 Final//EN\">\n<title>405 Method Not Allowed</title>\n"
                + "<h1>Method Not Allowed</h1>\n<p>The method is not allowed for the requested URL.</p>\n",
            status: .methodNotAllowed,
            contentType: "text/html; charset=utf-8",
            headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")]
        )
    }
}

/// One step of a raw (fault) reply.
enum RawStep {
    /// Writes and flushes bytes straight to the socket (through TLS if any).
    case write([UInt8])
    /// Waits before the next step.
    case wait(TimeAmount)
    /// Closes the connection normally (FIN).
    case close
    /// Aborts the connection: `SO_LINGER {1, 0}`, then close, so the kernel sends RST.
    case reset
    /// Does nothing more; the connection stays open until the client or the server's
    /// shutdown closes it.
    case stall
}
