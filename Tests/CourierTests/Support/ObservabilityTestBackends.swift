import Courier
import InMemoryTracing
import Logging
import NIOPosix
import Synchronization
import Tracing

/// A swift-log handler that keeps every record, for checking what a session logged (no global
/// bootstrap: the test hands `recorder.logger` to the configuration).
final class LogRecorder: Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
        /// Whether the handler ran on a SwiftNIO event loop (user code must never).
        var onEventLoop = false
    }

    private let records = Mutex<[Record]>([])

    var all: [Record] { records.withLock { $0 } }

    /// A logger at `trace` level writing here.
    var logger: Logger {
        var logger = Logger(label: "courier.test") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    fileprivate func append(_ record: Record) { records.withLock { $0.append(record) } }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.append(
                Record(
                    level: event.level, message: event.message.description, metadata: metadata.merging(event.metadata ?? [:]) { $1 },
                    onEventLoop: MultiThreadedEventLoopGroup.currentEventLoop != nil))
        }
    }
}

/// A tracer that writes W3C `traceparent` (version 00, sampled) and records spans in memory:
/// swift-distributed-tracing's `InMemoryTracer` with 32- and 16-hex-digit ids.
struct W3CTestTracer: Tracer {
    let inner = InMemoryTracer(
        idGenerator: .init(
            nextTraceID: { String(repeating: "0", count: 16) + hex16() },
            nextSpanID: { hex16() }))

    private static func hex16() -> String {
        let hex = String(UInt64.random(in: 1 ... .max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    var finishedSpans: [FinishedInMemorySpan] { inner.finishedSpans }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        inner.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() { inner.forceFlush() }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? { inner.activeSpan(identifiedBy: context) }

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Carrier == Extract.Carrier {}
}
