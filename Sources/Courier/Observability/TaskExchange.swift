public import CourierEngine
public import Foundation

/// One exchange of a task, as it went: the request as the session sent it (after the
/// interceptor, cookies, credentials and the cache's conditional fields), the response head
/// (when one arrived) and the exchange's metrics. A task has one per hop: its first request,
/// each redirect, each answer to a challenge and each retry. ``SessionEventMonitor``s receive it
/// in ``SessionEventMonitor/task(_:didFinishExchange:)``; ``HARRecorder`` writes them as HAR
/// entries.
public struct TaskExchange: Sendable {
    /// A header field as sent or received.
    public struct Header: Sendable, Equatable {
        /// The field's name, as written.
        public var name: String
        /// The field's value.
        public var value: String

        /// Creates a header field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// 0 for the first exchange, one more for each later hop.
    public var hop: Int
    /// The request's method.
    public var method: String
    /// The URL the request went to.
    public var url: URL
    /// The request's header fields as the session handed them to the engine (the engine adds
    /// `Host`, and `Content-Length` or `Transfer-Encoding`, from the URL and the body).
    public var requestHeaders: [Header]
    /// The response's status code, or nil when no response head arrived.
    public var statusCode: Int?
    /// The response's reason phrase, as the server sent it (HTTP/1.x).
    public var reasonPhrase: String?
    /// The response's HTTP version (`HTTP/1.1`, `HTTP/2`), when a head arrived.
    public var httpVersion: String?
    /// The response's header fields.
    public var responseHeaders: [Header]
    /// The exchange's timings and byte counts.
    public var metrics: EngineMetrics
    /// Why the exchange failed, if it did.
    public var error: (any Error)?

    /// Creates a description of an exchange.
    public init(
        hop: Int, method: String, url: URL, requestHeaders: [Header], statusCode: Int?, reasonPhrase: String?,
        httpVersion: String?, responseHeaders: [Header], metrics: EngineMetrics, error: (any Error)?
    ) {
        self.hop = hop
        self.method = method
        self.url = url
        self.requestHeaders = requestHeaders
        self.statusCode = statusCode
        self.reasonPhrase = reasonPhrase
        self.httpVersion = httpVersion
        self.responseHeaders = responseHeaders
        self.metrics = metrics
        self.error = error
    }
}
