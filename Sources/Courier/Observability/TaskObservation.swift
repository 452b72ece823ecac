import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Metrics
import NIOHTTP1
import Synchronization
import Tracing

/// One task's observation: its request id, the trace context it was made in, and each of its
/// exchanges (see ``ExchangeObservation``). Made by ``TaskDelegate`` only when the manager has
/// a ``SessionObserver``; otherwise the task holds nil and nothing here runs.
final class TaskObservation: Sendable {
    let observer: SessionObserver
    /// `courier.request_id`: 16 hex digits, random, one per task.
    let requestID: String
    /// The logger with `courier.request_id` in its metadata.
    let logger: Logger?
    /// The context the task was made in: the parent of its spans.
    let parentContext: InstrumentationContext
    private struct State {
        var exchanges = 0
        var firstStart: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    init(observer: SessionObserver) {
        self.observer = observer
        let requestID = String(UInt64.random(in: .min ... .max), radix: 16)
        self.requestID = String(repeating: "0", count: 16 - requestID.count) + requestID
        if var logger = observer.logger {
            logger[metadataKey: "courier.request_id"] = .string(self.requestID)
            self.logger = logger
        } else {
            self.logger = nil
        }
        parentContext = observer.tracer == nil ? .topLevel : (InstrumentationContext.current ?? .topLevel)
    }

    /// An exchange is about to go to the engine: starts its span, injects the span's context
    /// into `request`'s headers, logs it, and returns `next` wrapped so the exchange's head and
    /// end are seen. `url` is the request's URL as the caller gave it (credentials included:
    /// it is redacted here).
    func exchangeStarting(
        _ request: inout EngineRequest, url: URL?, _ next: @escaping @Sendable (EngineEvent) -> Void
    ) -> @Sendable (EngineEvent) -> Void {
        let now = ContinuousClock.now
        let attempt = state.withLock { state -> Int in
            if state.firstStart == nil { state.firstStart = now }
            defer { state.exchanges += 1 }
            return state.exchanges
        }
        let exchange = ExchangeObservation(task: self, request: &request, url: url ?? request.url, attempt: attempt, start: now)
        return { event in
            exchange.handle(event)
            next(event)
        }
    }

    /// An interceptor decided to send the task again after `delay` seconds because of
    /// `error`: an `info` record (the next attempt then has its own records, span and counts).
    func willRetry(after delay: Double, dueTo error: any Error) {
        guard let logger else { return }
        let attempt = state.withLock { $0.exchanges }
        logger.info(
            "HTTP retry scheduled",
            metadata: [
                "courier.attempt": .stringConvertible(attempt),
                "courier.retry_delay_ms": .string(Self.milliseconds(.milliseconds(max(0, delay.isFinite ? delay : 0) * 1000))),
                "error.type": .string(ObservabilityLabels.errorType(error)),
            ])
    }

    /// The task ended (before its completion handler runs): the task's log record and, when
    /// it failed, the failure counter.
    func taskFinished(method: String, url: URL?, response: HTTPURLResponse?, error: (any Error)?, retries: Int) {
        let (exchanges, firstStart) = state.withLock { ($0.exchanges, $0.firstStart) }
        let methodLabel = ObservabilityLabels.method(method)
        let errorType = error.map { ObservabilityLabels.errorType($0) }
        if let factory = observer.metricsFactory, let errorType {
            Counter(
                label: SessionObservability.MetricLabels.failures,
                dimensions: [("http.request.method", methodLabel), ("error.type", errorType)], factory: factory
            ).increment()
        }
        guard let logger else { return }
        var metadata: Logger.Metadata = [
            "http.request.method": .string(method),
            "url.full": .string(url.map { observer.redaction.redactedURL($0) } ?? "-"),
            "courier.exchanges": .stringConvertible(exchanges),
            "courier.retries": .stringConvertible(retries),
        ]
        if let firstStart {
            metadata["courier.duration_ms"] = .string(Self.milliseconds(ContinuousClock.now - firstStart))
        }
        if let response { metadata["http.response.status_code"] = .string(String(response.statusCode)) }
        if let error, let errorType {
            metadata["error.type"] = .string(errorType)
            metadata["error.message"] = .string(observer.redaction.redactedMessage(String(describing: error)))
            logger.warning("HTTP task failed", metadata: metadata)
        } else {
            logger.info("HTTP task finished", metadata: metadata)
        }
    }

    /// A duration in milliseconds, three decimals.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        let sign = microseconds < 0 ? "-" : ""
        let magnitude = microseconds.magnitude
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}

/// One exchange (one physical request) of an observed task: its span and its timings. Engine
/// events for one exchange arrive one at a time, in order.
final class ExchangeObservation: Sendable {
    private let task: TaskObservation
    private let span: (any Span)?
    private let method: String
    private let methodLabel: String
    private let host: String?
    private let attempt: Int
    private let start: ContinuousClock.Instant
    private let status = Mutex<Int?>(nil)

    init(task: TaskObservation, request: inout EngineRequest, url: URL, attempt: Int, start: ContinuousClock.Instant) {
        let method = request.method
        let methodLabel = ObservabilityLabels.method(method)
        let host = request.url.host
        let port = request.url.port ?? Self.defaultPort(request.url.scheme)
        self.task = task
        self.method = method
        self.methodLabel = methodLabel
        self.host = host
        self.attempt = attempt
        self.start = start
        let observer = task.observer
        let redactedURL = observer.redaction.redactedURL(url)
        if let tracer = observer.tracer {
            let span = tracer.startSpan(methodLabel == "_OTHER" ? "HTTP" : methodLabel, context: task.parentContext, ofKind: .client)
            span.updateAttributes { attributes in
                attributes["http.request.method"] = methodLabel
                if methodLabel != method { attributes["http.request.method_original"] = method }
                attributes["url.full"] = redactedURL
                if let host { attributes["server.address"] = host }
                if let port { attributes["server.port"] = port }
                if attempt > 0 { attributes["http.request.resend_count"] = attempt }
                attributes["courier.request_id"] = task.requestID
            }
            tracer.inject(span.context, into: &request.headers, using: HTTPHeadersInjector())
            self.span = span
        } else {
            self.span = nil
        }
        if let logger = task.logger, logger.logLevel <= .debug {
            var metadata: Logger.Metadata = [
                "http.request.method": .string(method),
                "url.full": .string(redactedURL),
                "courier.attempt": .stringConvertible(attempt),
            ]
            if logger.logLevel <= .trace {
                var headers: Logger.Metadata = [:]
                for (name, value) in request.headers {
                    let shown = observer.redaction.redactedHeaderValue(name: name, value: value)
                    if case .string(let earlier) = headers[name] {
                        headers[name] = .string(earlier + ", " + shown)
                    } else {
                        headers[name] = .string(shown)
                    }
                }
                metadata["http.request.headers"] = .dictionary(headers)
            }
            logger.debug("HTTP request", metadata: metadata)
        }
    }

    private static func defaultPort(_ scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    func handle(_ event: EngineEvent) {
        switch event {
        case .responseHead(let head):
            status.withLock { $0 = Int(head.status.code) }
        case .finished(let metrics):
            ended(error: nil, metrics: metrics)
        case .failed(let error, let metrics):
            ended(error: error, metrics: metrics)
        case .uploadProgress, .bodyPart, .metricsUpdated:
            break
        }
    }

    private func ended(error: EngineError?, metrics: EngineMetrics) {
        let elapsed = ContinuousClock.now - start
        let status = status.withLock { $0 }
        let observer = task.observer
        let errorType: String? = error.map { ObservabilityLabels.errorType($0) } ?? status.flatMap { $0 >= 400 ? String($0) : nil }
        // What the error says, as it may be shown (it can name the request's URL).
        let errorMessage = error.map { observer.redaction.redactedMessage($0.description) }
        if let factory = observer.metricsFactory {
            let dimensions = observer.dimensions(method: methodLabel, status: error == nil ? status : nil, host: host)
            Counter(label: SessionObservability.MetricLabels.requests, dimensions: dimensions, factory: factory).increment()
            let (seconds, attoseconds) = elapsed.components
            Metrics.Timer(label: SessionObservability.MetricLabels.duration, dimensions: dimensions, factory: factory)
                .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            let methodDimension = [("http.request.method", methodLabel)]
            let sent = metrics.requestHeaderBytesSent + metrics.requestBodyBytesSent
            let received = metrics.responseHeaderBytesReceived + metrics.responseBodyBytesReceived
            if sent > 0 { Counter(label: SessionObservability.MetricLabels.bytesSent, dimensions: methodDimension, factory: factory).increment(by: sent) }
            if received > 0 {
                Counter(label: SessionObservability.MetricLabels.bytesReceived, dimensions: methodDimension, factory: factory)
                    .increment(by: received)
            }
        }
        if let span {
            span.updateAttributes { attributes in
                if let status, error == nil { attributes["http.response.status_code"] = status }
                if let errorType { attributes["error.type"] = errorType }
                if let version = Self.protocolVersion(metrics.networkProtocolName) { attributes["network.protocol.version"] = version }
            }
            if let error, let errorMessage {
                // Exporters write what the error describes: recorded as shown when redaction hid something.
                span.recordError(errorMessage == error.description ? error : RedactedError(description: errorMessage))
            }
            if errorType != nil { span.setStatus(SpanStatus(code: .error, message: errorMessage)) }
            // The exchange's phases as span events (`courier.connectStart`, …), each at the
            // instant it happened: the same timeline the event monitors' TaskEvents come from.
            var timeline = TaskEventTimeline(hasBody: metrics.requestBodyBytesSent > 0)
            for entry in timeline.ended(with: metrics, error: error, at: Date()) {
                span.addEvent(SpanEvent(name: "courier.\(entry.kind.name)", at: EventInstant(entry.date)))
            }
            span.end()
        }
        if let logger = task.logger, logger.logLevel <= .debug {
            var metadata: Logger.Metadata = [
                "http.request.method": .string(method),
                "courier.attempt": .stringConvertible(attempt),
                "courier.duration_ms": .string(TaskObservation.milliseconds(elapsed)),
                "courier.bytes_sent": .stringConvertible(metrics.requestHeaderBytesSent + metrics.requestBodyBytesSent),
                "courier.bytes_received": .stringConvertible(metrics.responseHeaderBytesReceived + metrics.responseBodyBytesReceived),
                "courier.reused_connection": .stringConvertible(metrics.isReusedConnection),
            ]
            if let status, error == nil { metadata["http.response.status_code"] = .string(String(status)) }
            if let responseStart = metrics.responseStart {
                metadata["courier.time_to_first_byte_ms"] = .string(
                    TaskObservation.milliseconds(.milliseconds(responseStart.timeIntervalSince(metrics.fetchStart) * 1000)))
            }
            if let connectStart = metrics.connectStart, let connectEnd = metrics.connectEnd {
                metadata["courier.connect_ms"] = .string(
                    TaskObservation.milliseconds(.milliseconds(connectEnd.timeIntervalSince(connectStart) * 1000)))
            }
            if let errorType, let errorMessage {
                metadata["error.type"] = .string(errorType)
                metadata["error.message"] = .string(errorMessage)
            }
            logger.debug(error == nil ? "HTTP response" : "HTTP exchange failed", metadata: metadata)
        }
    }

    /// `1.1`, `2` or `1.0` from an ALPN-like name.
    private static func protocolVersion(_ name: String?) -> String? {
        switch name {
        case "h2": return "2"
        case "http/1.1": return "1.1"
        case "http/1.0": return "1.0"
        default: return nil
        }
    }
}

/// A `Date` as a tracer's instant (nanoseconds since 1970), for span events dated by metrics.
private struct EventInstant: TracerInstant {
    let nanosecondsSinceEpoch: UInt64

    init(_ date: Date) {
        nanosecondsSinceEpoch = UInt64(max(0, date.timeIntervalSince1970 * 1_000_000_000))
    }

    static func < (lhs: EventInstant, rhs: EventInstant) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }
}
