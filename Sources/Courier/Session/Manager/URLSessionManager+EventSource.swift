#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

extension URLSessionManager {
    /// A server-sent event stream for `request` that reconnects, as a browser's `EventSource`
    /// does, resuming with `Last-Event-ID`; see ``EventSource`` for the rules and how the
    /// sequence stops. Nothing is sent until the sequence is iterated.
    ///
    /// ```swift
    /// let source = manager.eventSource(for: URLRequest(url: url))
    /// for try await event in source where event.event == "price" {
    ///     print(event.data)
    /// }
    /// ```
    /// - Parameters:
    ///   - request: the request each connection sends (usually a GET); `Accept`,
    ///     `Cache-Control` and `Last-Event-ID` are set on it for each connection (a
    ///     `Last-Event-ID` it carries is the one the first connection sends).
    ///   - configuration: reconnection time, backoff and limits; default: an
    ///     ``EventSourceConfiguration`` with its defaults (3 s, backoff to 60 s, never gives up).
    ///   - interceptor: for these requests only, after the manager's ``URLSessionManager/interceptor``
    ///     (default nil).
    /// - Returns: the source, an async sequence of ``ServerSentEvent``.
    public func eventSource(
        for request: URLRequest, configuration: EventSourceConfiguration = EventSourceConfiguration(),
        interceptor: (any RequestInterceptor)? = nil
    ) -> EventSource {
        EventSource(manager: self, request: request, configuration: configuration, interceptor: interceptor)
    }
}

extension HTTPSessionManager {
    /// A reconnecting server-sent event stream for `urlString` (resolved against ``baseURL``
    /// and built by ``requestSerializer``, as a GET); see
    /// ``URLSessionManager/eventSource(for:configuration:interceptor:)``.
    ///
    /// ```swift
    /// let source = try manager.eventSource("events")
    /// for try await event in source { print(event.data) }
    /// ```
    /// - Throws: ``CourierError/requestSerializationFailed(_:)`` for a bad URL or parameters.
    public func eventSource(
        _ urlString: String, parameters: Parameters? = nil, headers: [String: String]? = nil,
        configuration: EventSourceConfiguration = EventSourceConfiguration(), interceptor: (any RequestInterceptor)? = nil
    ) throws -> EventSource {
        eventSource(
            for: try makeRequest(method: "GET", urlString: urlString, parameters: parameters, headers: headers),
            configuration: configuration, interceptor: interceptor)
    }
}
