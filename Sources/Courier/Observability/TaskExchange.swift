public import CourierEngine
public import Foundation
import NIOHTTP1

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
    public var requestHeaders: [Header] {
        get { Self.headers(requestFields) }
        set { requestFields = Self.fields(newValue) }
    }
    /// The response's status code, or nil when no response head arrived.
    public var statusCode: Int?
    /// The response's reason phrase, as the server sent it (HTTP/1.x).
    public var reasonPhrase: String?
    /// The response's HTTP version (`HTTP/1.1`, `HTTP/2`), when a head arrived.
    public var httpVersion: String?
    /// The response's header fields.
    public var responseHeaders: [Header] {
        get { Self.headers(responseFields) }
        set { responseFields = Self.fields(newValue) }
    }
    // The fields as the engine holds them: made into `Header` arrays only when read (every
    // exchange of a task with a monitor has one; few monitors read the fields).
    private var requestFields: HTTPHeaders
    private var responseFields: HTTPHeaders
    /// The exchange's timings and byte counts.
    public var metrics: EngineMetrics
    /// Why the exchange failed, if it did.
    public var error: (any Error)?

    /// Creates a description of an exchange.
    public init(
        hop: Int, method: String, url: URL, requestHeaders: [Header], statusCode: Int?, reasonPhrase: String?,
        httpVersion: String?, responseHeaders: [Header], metrics: EngineMetrics, error: (any Error)?
    ) {
        self.init(
            hop: hop, method: method, url: url, requestFields: Self.fields(requestHeaders), statusCode: statusCode,
            reasonPhrase: reasonPhrase, httpVersion: httpVersion, responseFields: Self.fields(responseHeaders),
            metrics: metrics, error: error)
    }

    /// An exchange with the fields as the engine holds them.
    init(
        hop: Int, method: String, url: URL, requestFields: HTTPHeaders, statusCode: Int?, reasonPhrase: String?,
        httpVersion: String?, responseFields: HTTPHeaders, metrics: EngineMetrics, error: (any Error)?
    ) {
        self.hop = hop
        self.method = method
        self.url = url
        self.requestFields = requestFields
        self.statusCode = statusCode
        self.reasonPhrase = reasonPhrase
        self.httpVersion = httpVersion
        self.responseFields = responseFields
        self.metrics = metrics
        self.error = error
    }

    private static func headers(_ fields: HTTPHeaders) -> [Header] {
        fields.map { Header(name: $0.name, value: $0.value) }
    }

    private static func fields(_ headers: [Header]) -> HTTPHeaders {
        HTTPHeaders(headers.map { ($0.name, $0.value) })
    }
}
