#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif
import Synchronization

/// A server-sent event stream that reconnects, as the HTML standard's `EventSource` does: an
/// async sequence of ``ServerSentEvent`` values that goes on across dropped connections and
/// ends of the stream, resuming with `Last-Event-ID`. Made by
/// ``URLSessionManager/eventSource(for:configuration:interceptor:)``.
///
/// ```swift
/// let source = manager.eventSource(for: URLRequest(url: url))
/// for try await event in source {
///     print(event.id ?? "-", event.data)
/// }
/// ```
///
/// Each connection is a streaming request of the manager
/// (``URLSessionManager/bytes(for:body:interceptor:)``), so interceptors, cookies,
/// authentication, redirects and the security policy apply. Each sends
/// `Accept: text/event-stream`, `Cache-Control: no-cache` and, once the server has given an
/// `id:`, `Last-Event-ID` with the last one (a `Last-Event-ID` in the request is the first;
/// an `id:` holding NUL is ignored, an empty `id:` clears it).
///
/// When a connection ends, normally or broken off, the source waits the reconnection time (the
/// server's `retry:`, else ``EventSourceConfiguration/initialReconnectionTime``) and connects
/// again; an event the connection ended in the middle of is dropped, and the server resumes
/// after the last complete one, so none is lost or given twice. While the server fails
/// (connection errors, `5xx`, `408`, `429` with its `Retry-After`) the wait backs off, with
/// jitter, up to ``EventSourceConfiguration/maximumReconnectionDelay``; a connection that is
/// accepted resets it.
///
/// How the sequence stops:
/// - `204 No Content`: it ends (`nil`), as the server asks the client to stop reconnecting.
/// - A status other than `200`, `204`, `408`, `429` and `5xx`: it throws
///   ``CourierError/unacceptableStatusCode(response:data:underlying:)``.
/// - `200` that is not `text/event-stream`: it throws
///   ``CourierError/unacceptableContentType(_:response:data:)``.
/// - ``EventSourceConfiguration/maximumConsecutiveFailures`` failures in a row: it throws the
///   last one (the connection error, or the status error of the last `5xx`).
/// - A failure no retry can help (TLS rejected, too many redirects, a line or event longer
///   than ``EventSourceConfiguration/maximumLineLength``): it throws it.
/// - The consumer stops: leaving the `for` loop (dropping the iterator) cancels the running
///   request at once, and its connection is closed; cancelling the iterating Swift task makes
///   the iteration throw ``CourierError/cancelled(url:)`` (whether it was reading, waiting to
///   reconnect or connecting).
///
/// Iterate once. The properties (``lastEventID``, ``reconnectionTime``, ``reconnections``, ...)
/// may be read from any thread while it runs.
public final class EventSource: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent

    /// The manager every connection goes through.
    public let manager: URLSessionManager
    /// The request each connection sends (with the event-stream fields set on top).
    public let request: URLRequest
    /// How the source reconnects.
    public let configuration: EventSourceConfiguration
    let interceptor: (any RequestInterceptor)?

    private struct State {
        var reconnection: EventSourceReconnection
        var response: HTTPURLResponse?
        /// The reachability made for ``EventSourceConfiguration/waitsForConnectivity`` when the
        /// configuration gives none (monitored until the source goes away).
        var ownReachability: NetworkReachabilityManager?
    }

    private let state: Mutex<State>

    init(manager: URLSessionManager, request: URLRequest, configuration: EventSourceConfiguration, interceptor: (any RequestInterceptor)?) {
        self.manager = manager
        self.request = request
        self.configuration = configuration
        self.interceptor = interceptor
        let given = request.value(forHTTPHeaderField: "Last-Event-ID")
        state = Mutex(State(reconnection: EventSourceReconnection(configuration: configuration, lastEventID: given)))
    }

    deinit {
        state.withLock { $0.ownReachability }?.stopMonitoring()
    }

    // MARK: - What a consumer may read

    /// The last event ID the server gave (`id:`), sent as `Last-Event-ID` on reconnection; nil
    /// before any, or after an empty `id:` cleared it.
    public var lastEventID: String? {
        let id = state.withLock { $0.reconnection.lastEventID }
        return id.isEmpty ? nil : id
    }

    /// The wait before reconnecting after a stream ends: the server's latest `retry:`, else
    /// ``EventSourceConfiguration/initialReconnectionTime``.
    public var reconnectionTime: Duration { state.withLock { $0.reconnection.reconnectionTime } }

    /// The wait chosen before the latest reconnection (the reconnection time, or a backoff
    /// while the server fails); nil before the first.
    public var reconnectionDelay: Duration? { state.withLock { $0.reconnection.lastDelay } }

    /// Connection attempts made after the first one.
    public var reconnections: Int { state.withLock { $0.reconnection.reconnections } }

    /// Failed connection attempts since the last connection that was accepted.
    public var consecutiveFailures: Int { state.withLock { $0.reconnection.consecutiveFailures } }

    /// The response of the latest connection attempt that got one (its status and fields); nil
    /// before the first.
    public var response: HTTPURLResponse? { state.withLock { $0.response } }

    // MARK: - Iteration

    /// Iterates the events, connecting and reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let source: EventSource
        /// The wait before the next connection, when not reading.
        private var delay: Duration = .zero
        /// Wait (at most this long) for reachability before the next connection.
        private var connectivityWait: Duration?
        /// The lines of the accepted response being read.
        private var lines: ResponseBodyLines.AsyncIterator?
        private var parser = ServerSentEventParser()
        private var appliedRetry: Int?
        private var finished = false

        init(source: EventSource) {
            self.source = source
        }

        /// The next event; nil when the server answered `204` (see ``EventSource`` for when the
        /// sequence stops).
        /// - Throws: a ``CourierError``: the status or content-type error of a response that
        ///   can't be an event stream, the last failure when the source gives up, or
        ///   ``CourierError/cancelled(url:)`` when the task is cancelled.
        public mutating func next() async throws -> ServerSentEvent? {
            while !finished {
                if var current = lines {
                    lines = nil
                    let line: String?
                    do {
                        line = try await current.next()
                    } catch {
                        try streamEnded(error)
                        continue
                    }
                    guard let line else {
                        try streamEnded(nil)
                        continue
                    }
                    lines = current
                    if let event = try consume(line) { return event }
                } else {
                    try await connect()
                }
            }
            return nil
        }

        /// Feeds one line to the parser and the reconnection rules.
        private mutating func consume(_ line: String) throws -> ServerSentEvent? {
            let event: ServerSentEvent?
            do {
                event = try parser.consume(line)
            } catch {
                lines = nil
                finished = true
                throw CourierError.responseBodyTooLarge(
                    url: source.request.url, limit: Int64(parser.maximumDataLength), contentLength: nil, received: Int64(error.length))
            }
            let retry = parser.reconnectionTime
            if let retry, retry != appliedRetry {
                appliedRetry = retry
                source.update { $0.retryField(milliseconds: retry) }
            }
            if line.isEmpty {
                let id = parser.dispatchedLastEventID
                source.update { $0.eventDispatched(lastEventID: id, delivered: event != nil) }
            }
            return event
        }

        /// The accepted response's body ended (`error` nil) or broke off.
        private mutating func streamEnded(_ error: (any Error)?) throws {
            lines = nil
            let kind: EventSourceReconnection.FailureKind? =
                Task.isCancelled ? .cancelled : error.map(EventSourceReconnection.failureKind(of:))
            let jitter = Double.random(in: 0..<1)
            let decision = source.update { $0.streamEnded(kind, jitter: jitter) }
            let failure =
                error ?? CourierError.connectionLost(url: source.request.url, reason: "the event stream ended before any event")
            try carryOut(decision, failure: kind == .cancelled ? CourierError.cancelled(url: source.request.url) : failure)
        }

        /// Waits as decided, then makes one connection attempt.
        private mutating func connect() async throws {
            let url = source.request.url
            do {
                if let bound = connectivityWait {
                    connectivityWait = nil
                    await source.waitForConnectivity(atMost: bound)
                } else if delay > .zero {
                    try await Task.sleep(for: delay)
                }
                try Task.checkCancellation()
            } catch {
                finished = true
                throw CourierError.cancelled(url: url)
            }
            delay = .zero
            let request = source.update { reconnection -> URLRequest in
                reconnection.attemptStarting()
                var request = source.request
                for (name, value) in reconnection.requestFields { request.setValue(value, forHTTPHeaderField: name) }
                return request
            }
            let response: HTTPURLResponse
            let body: ResponseBodyStream
            do {
                (response, body) = try await source.manager.bytes(for: request, interceptor: source.interceptor)
            } catch {
                let kind = Task.isCancelled ? .cancelled : EventSourceReconnection.failureKind(of: error)
                var reachability: NetworkReachabilityManager.Status?
                if kind == .unreachable { reachability = await source.reachabilityStatus() }
                let jitter = Double.random(in: 0..<1)
                let decision = source.update { $0.connectFailed(kind, reachability: reachability, jitter: jitter) }
                try carryOut(decision, failure: kind == .cancelled ? CourierError.cancelled(url: url) : error)
                return
            }
            let retryAfter = RetryRule.retryAfter(response.value(forHTTPHeaderField: "Retry-After"), now: Date()).map {
                Duration.milliseconds(Int64(Swift.min($0, 86_400) * 1000))
            }
            let jitter = Double.random(in: 0..<1)
            let decision = source.update(response: response) {
                $0.responseArrived(status: response.statusCode, mimeType: response.mimeType, retryAfter: retryAfter, jitter: jitter)
            }
            guard decision == .stream else {
                body.cancel()
                let failure: CourierError =
                    response.statusCode == 200
                    ? .unacceptableContentType(response.mimeType, response: response, data: nil)
                    : .unacceptableStatusCode(response: response, data: nil, underlying: nil)
                try carryOut(decision, failure: failure)
                return
            }
            let maximum = Swift.max(1, source.configuration.maximumLineLength)
            lines = body.lines(maximumLineLength: maximum).makeAsyncIterator()
            parser = ServerSentEventParser(maximumDataLength: maximum, lastEventID: source.lastEventID)
            appliedRetry = nil
        }

        /// Carries out a decision that is not `.stream`; `failure` is what `.fail` throws.
        private mutating func carryOut(_ decision: EventSourceReconnection.Decision, failure: any Error) throws {
            switch decision {
            case .stream:
                break
            case .reconnect(let after):
                delay = after
            case .waitForConnectivity(let bound):
                connectivityWait = bound
            case .finish:
                finished = true
            case .fail:
                finished = true
                if failure is CancellationError { throw CourierError.cancelled(url: source.request.url) }
                throw failure
            }
        }
    }

    /// Makes the iterator (iterate once).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }

    // MARK: - Internals

    /// Runs `body` on the reconnection state (and records `response` when given).
    fileprivate func update<T: Sendable>(response: HTTPURLResponse? = nil, _ body: (inout EventSourceReconnection) -> T) -> T {
        state.withLock { state in
            if let response { state.response = response }
            return body(&state.reconnection)
        }
    }

    /// What reachability says of the host now, nil when ``EventSourceConfiguration/waitsForConnectivity``
    /// is off or the host can't be watched. A reachability the source makes itself starts
    /// monitoring here; its first evaluation is waited for (at most 2 s).
    fileprivate func reachabilityStatus() async -> NetworkReachabilityManager.Status? {
        guard configuration.waitsForConnectivity != nil, let found = reachabilityManager() else { return nil }
        let reachability = found.0
        guard found.isNew || reachability.status == .unknown else { return reachability.status }
        return await Self.first(of: reachability.statusUpdates, within: .seconds(2)) { $0 != .unknown } ?? reachability.status
    }

    /// Waits until reachability says the host can be reached, or `bound` passes, or the task is
    /// cancelled.
    fileprivate func waitForConnectivity(atMost bound: Duration) async {
        guard let reachability = reachabilityManager()?.0 else { return }
        _ = await Self.first(of: reachability.statusUpdates, within: bound) {
            $0 == .reachableViaWiFi || $0 == .reachableViaWWAN
        }
    }

    /// The configured reachability, or the source's own for the request's host (made and
    /// started on first use: `isNew`).
    private func reachabilityManager() -> (NetworkReachabilityManager, isNew: Bool)? {
        if let given = configuration.reachability { return (given, false) }
        guard let host = request.url?.host, !host.isEmpty else { return nil }
        let made: NetworkReachabilityManager? = state.withLock { state in
            if state.ownReachability != nil { return nil }
            let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            state.ownReachability = (try? NetworkReachabilityManager(address: bare)) ?? NetworkReachabilityManager(domain: bare)
            return state.ownReachability
        }
        if let made {
            made.startMonitoring()
            return (made, true)
        }
        return state.withLock { $0.ownReachability }.map { ($0, false) }
    }

    /// The first status of `updates` that `matches`, or nil when `bound` passes first (or the
    /// task is cancelled).
    private static func first(
        of updates: AsyncStream<NetworkReachabilityManager.Status>, within bound: Duration,
        where matches: @escaping @Sendable (NetworkReachabilityManager.Status) -> Bool
    ) async -> NetworkReachabilityManager.Status? {
        await withTaskGroup(of: NetworkReachabilityManager.Status?.self) { group in
            group.addTask {
                for await status in updates where matches(status) { return status }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: bound)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
