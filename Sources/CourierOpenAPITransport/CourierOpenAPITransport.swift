public import Courier
public import Foundation
public import HTTPTypes
import NIOCore
public import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` on Courier's session layer: a client made by
/// swift-openapi-generator sends its requests through a ``Courier/URLSessionManager``, with
/// everything the session does for any task (redirects, authentication, cookies, the
/// security policy, interceptors, hooks, monitors, metrics).
///
/// ```swift
/// let transport = CourierOpenAPITransport(manager: URLSessionManager())
/// let client = Client(serverURL: try Servers.Server1.url(), transport: transport)
/// let output = try await client.getSlideshow()
/// ```
///
/// - Streaming both ways: a request `HTTPBody` is sent as it is produced, with backpressure
///   (its next chunk is asked for once the connection took the previous one), with
///   `Content-Length` when the body's length is known and chunked otherwise. The response
///   comes back at its head, and its `HTTPBody` streams the bytes as they arrive, with the
///   session's backpressure (``Courier/ResponseBodyStream``); it is iterable once.
/// - Cancellation: cancelling the Swift task that awaits the call, or that iterates the
///   response body, cancels the request on the wire; so does dropping the response body
///   before its end.
/// - Metrics: each request is a ``Courier/DataTask`` of the manager whose
///   ``Courier/SessionTask/taskDescription`` is the operation's id (in place of the manager's
///   tag), so the manager's metrics
///   block (`setTaskDidFinishCollectingMetricsBlock`), its event monitors and its
///   observability see every exchange and can tell the operations apart.
/// - Errors: any status is a response (the generated client turns a status the document does
///   not describe into its `undocumented` case); a transport failure is thrown as the
///   session's ``Courier/CourierError`` (`cancelled`, `timedOut`, `cannotConnect`,
///   `connectionLost`, ...), which the generated client wraps in `ClientError` as its
///   `underlyingError`; a failure in the middle of the response body is thrown by the body's
///   iteration, the same way.
///
/// The transport is a value holding the manager; copies share it. It never invalidates the
/// manager: whoever made the manager owns its lifetime.
public struct CourierOpenAPITransport: ClientTransport {
    /// The session the requests go through.
    public let manager: URLSessionManager

    /// Makes a transport sending through `manager` (an ``Courier/HTTPSessionManager`` works too;
    /// its base URL and request serializer are not used: the generated client gives the
    /// server URL and builds the requests).
    public init(manager: URLSessionManager) {
        self.manager = manager
    }

    /// Sends `request` (a path relative to `baseURL`) with `body` and returns the response at
    /// its head, with its body to stream (nil for `HEAD`). Called by the generated client.
    /// - Parameters:
    ///   - request: the operation's request; its path is appended to `baseURL`'s.
    ///   - body: the request body, streamed; nil for none.
    ///   - baseURL: the server URL the client was made with.
    ///   - operationID: the operation's id, set as the task's ``Courier/SessionTask/taskDescription``.
    /// - Returns: the final response (after redirects and answered challenges) and its body.
    /// - Throws: ``Courier/CourierError/requestSerializationFailed(_:)`` for a base URL
    ///   without scheme or host; the session's ``Courier/CourierError`` when the exchange fails
    ///   before the response head (``Courier/CourierError/cancelled(url:)`` when the awaiting
    ///   Swift task is cancelled).
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws
        -> (HTTPResponse, HTTPBody?)
    {
        let target = try OpenAPIRequestTarget.request(request, baseURL: baseURL)
        let upload: RequestBody? = if let body { try await Self.requestBody(of: body) } else { nil }
        let streamed = try await manager.stream(for: target, uploading: upload, taskDescription: operationID)
        let stream = streamed.body
        if request.method == .head {
            // Nothing follows a HEAD's head; read the (empty) end so the connection is reused.
            for try await _ in stream {}
            return (streamed.response, nil)
        }
        return (streamed.response, OpenAPIResponseBody.body(of: stream, response: streamed.response))
    }

    /// Request bodies that may be iterated again and whose known length is at most this many
    /// bytes (4 MiB) are gathered and sent as bytes, so that a redirect that keeps the body
    /// (307, 308) or an interceptor's retry can send them again. The generated client's JSON,
    /// form and text bodies are such bodies.
    public static let replayableBodyLimit: Int64 = 4 << 20

    /// `body` as a session request body. A replayable body up to ``replayableBodyLimit`` is
    /// gathered (replayable); any other is streamed: its chunks written as they come, each
    /// waiting until the connection can take more, its known length as `Content-Length`
    /// (consumed once, so a redirect or retry that must resend it fails with
    /// ``Courier/CourierError/requestBodyNotReplayable(url:)``).
    static func requestBody(of body: HTTPBody) async throws -> RequestBody {
        let length: Int64? =
            switch body.length {
            case .known(let count): count
            case .unknown: nil
            }
        if body.iterationBehavior == .multiple, let length, length >= 0, length <= replayableBodyLimit {
            return .data(try await Data(collecting: body, upTo: Int(length)))
        }
        return .stream(length: length) { writer in
            for try await chunk in body {
                try await writer.write(ByteBuffer(bytes: chunk))
            }
        }
    }
}
