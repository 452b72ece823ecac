public import Logging
public import Metrics
public import Tracing

/// What a session reports about its requests: swift-log records, swift-metrics counters and
/// timers, swift-distributed-tracing client spans. Set on ``SessionConfiguration/observability``.
///
/// Everything is off by default and each part is opt-in per configuration: with no
/// ``logger``, no ``metricsFactory`` and no ``tracer`` (the default) a task makes no
/// observation at all: no allocation, lock or clock read per request. Nothing is read from the
/// global `LoggingSystem`, `MetricsSystem` or `InstrumentationSystem`: pass their instances
/// (`Logger(label:)`, `MetricsSystem.factory`, `InstrumentationSystem.tracer`) if you bootstrap
/// them. Every value here is used from any thread: the backends must be thread-safe (all
/// swift-log, swift-metrics and swift-distributed-tracing backends are).
///
/// What is reported, per task (a request id, `courier.request_id`, ties its records together)
/// and per exchange (each physical request: the first, every redirect hop, every answer to an
/// authentication challenge and every interceptor retry is its own exchange):
/// - **Logs**: `debug` when an exchange starts (method, URL, attempt) and ends (status or error
///   kind, timings, bytes); `trace` adds the request headers; `info` when the task ends
///   (`warning` when it failed). URLs and headers pass through ``redaction``.
/// - **Metrics**: see ``MetricLabels`` for the names; dimensions are the method (standard
///   methods, else `_OTHER`), the status class (`1xx`…`5xx`, or `error` when no response
///   came) and, only with ``metricsIncludeServerAddress``, the host.
/// - **Spans**: one client span per exchange, named by the method, with OpenTelemetry's HTTP
///   attribute names (`http.request.method`, `url.full` redacted, `server.address`,
///   `server.port`, `http.response.status_code`, `http.request.resend_count`, `error.type`),
///   its context injected into the request's headers by the tracer (a W3C tracer writes
///   `traceparent`). Its parent is the `ServiceContext` current when the task was made.
public struct SessionObservability: Sendable {
    /// Where log records go, or nil (the default) for none. Its log level filters as usual;
    /// its metadata is kept and added to.
    public var logger: Logger?
    /// Where counters and timers go, or nil (the default) for none. Metrics are opt-in per
    /// configuration (a bootstrapped `MetricsSystem` alone is not used): pass
    /// `MetricsSystem.factory` to report to the global backend.
    public var metricsFactory: (any MetricsFactory)?
    /// The tracer that makes client spans and injects their context into requests, or nil
    /// (the default) for none. Pass `InstrumentationSystem.tracer` to use the global one.
    public var tracer: (any Tracer)?
    /// What URLs and headers lose before they are logged or put on a span. Default
    /// ``ObservabilityRedaction/default``.
    public var redaction: ObservabilityRedaction = .default
    /// Whether metrics carry a `server.address` dimension (the host). Off by default: a
    /// client that talks to many hosts would make one time series per host.
    public var metricsIncludeServerAddress: Bool = false

    /// Nothing reported: no logger, no metrics, no tracer.
    public init() {}

    /// Reports to the given backends (each nil by default).
    /// - Parameters:
    ///   - logger: where log records go.
    ///   - metricsFactory: where counters and timers go.
    ///   - tracer: what makes spans and injects `traceparent`.
    public init(logger: Logger? = nil, metricsFactory: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil) {
        self.logger = logger
        self.metricsFactory = metricsFactory
        self.tracer = tracer
    }

    /// Whether anything is reported (a logger, metrics or a tracer is set).
    public var isEnabled: Bool { logger != nil || metricsFactory != nil || tracer != nil }

    /// The names of the metrics a session reports.
    public enum MetricLabels {
        /// Counter: exchanges sent (one per attempt, redirect hop or retry), by method and
        /// status class (and host when asked).
        public static let requests = "courier.http.client.requests"
        /// Counter: tasks that ended with an error, by method and `error.type` (the
        /// ``CourierError`` case, e.g. `cannotConnect`, `cancelled`, `timedOut`).
        public static let failures = "courier.http.client.failures"
        /// Timer: each exchange's duration, from the engine accepting it to the last byte (or
        /// the failure), by method and status class (and host when asked).
        public static let duration = "http.client.request.duration"
        /// Counter: bytes written (request head and body), by method.
        public static let bytesSent = "courier.http.client.bytes.sent"
        /// Counter: bytes read (response head and body, after decompression), by method.
        public static let bytesReceived = "courier.http.client.bytes.received"
    }
}
