import Logging
import Metrics
import Tracing

/// A manager's observability backends (from ``SessionConfiguration/observability``), made
/// once per manager and only when something is configured: a task of a manager without one
/// holds nil and pays nothing (see ``TaskObservation``).
final class SessionObserver: Sendable {
    let logger: Logger?
    let metricsFactory: (any MetricsFactory)?
    let tracer: (any Tracer)?
    let redaction: ObservabilityRedaction
    let metricsIncludeServerAddress: Bool

    /// Nil when `observability` reports nothing.
    init?(_ observability: SessionObservability) {
        guard observability.isEnabled else { return nil }
        logger = observability.logger
        metricsFactory = observability.metricsFactory
        tracer = observability.tracer
        redaction = observability.redaction
        metricsIncludeServerAddress = observability.metricsIncludeServerAddress
    }

    /// Dimensions of the request counter and the duration timer.
    func dimensions(method: String, status: Int?, host: String?) -> [(String, String)] {
        var dimensions = [("http.request.method", method), ("http.response.status_class", ObservabilityLabels.statusClass(status))]
        if metricsIncludeServerAddress { dimensions.append(("server.address", host ?? "")) }
        return dimensions
    }
}
