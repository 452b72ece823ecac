public import CourierEngine
public import Foundation
public import HTTPTypes
import NIOHTTP1

/// A response as swift-http-types describes it, with what the session made of its body. No
/// `HTTPURLResponse` is made for it (that costs ~3.5 µs per header field on Linux).
public struct HTTPTypesResponse<Value: Sendable>: Sendable {
    /// The body (``URLSessionManager/response(for:body:interceptor:)``) or the decoded value.
    public var value: Value
    /// The final response: status and fields (after redirects and answered challenges). Its
    /// fields are made from the engine's head on the first read (of this, or of
    /// ``headerFields``) and kept; reading only ``status`` makes none.
    public var response: HTTPResponse {
        get { head.response }
        set { head = LazyResponseHead(newValue) }
    }
    /// The URL the final response came from (differs from the request's after a redirect).
    public var url: URL
    /// Timings of the final exchange.
    public var metrics: EngineMetrics?

    /// The response's status.
    public var status: HTTPResponse.Status { head.status }
    /// The response's header fields, in arrival order.
    public var headerFields: HTTPFields { response.headerFields }

    /// The head behind ``response`` (internal: tests read how often its fields were made).
    private(set) var head: LazyResponseHead

    init(value: Value, head: LazyResponseHead, url: URL, metrics: EngineMetrics?) {
        self.value = value
        self.head = head
        self.url = url
        self.metrics = metrics
    }

    /// - Throws: ``CourierError/connectionLost(url:reason:)`` for a status outside 0...999.
    init(value: Value, head: HTTPResponseHead, url: consuming URL, metrics: EngineMetrics?) throws {
        let lazyHead = try LazyResponseHead(head, url: url)
        self.init(value: value, head: lazyHead, url: url, metrics: metrics)
    }
}
