import CourierEngine
import Foundation

/// Turns what the engine reports about one exchange (snapshots of its metrics, the head and the
/// first body chunk arriving, its end) into that exchange's phase events, in order, each once.
/// A plain value: it reads no clock but the dates it is given, and is tested as one.
///
/// The order is fixed by the exchange's shape, not by sorting dates: the wait for a connection
/// starts; a new connection's name lookup, connect and TLS handshake start and end (TLS inside
/// connect); the wait ends and the connection is acquired; the request's head, then its body,
/// are written; the response's head, then its body, arrive; the connection is released. A
/// snapshot may skip steps (a reused connection has no setup), and a step a snapshot reports
/// brings every earlier step it also reports with it.
struct TaskEventTimeline {
    /// The steps emitted so far.
    private var emitted = StepSet()
    /// The date of the last event emitted: no later event is dated before it (the session
    /// stamps the head and the first body chunk when it handles them, which can be after the
    /// engine's own stamp of the response's end).
    private var lastDate: Date?
    /// Whether the request has a body (its phase is reported only then).
    let hasBody: Bool

    init(hasBody: Bool) {
        self.hasBody = hasBody
    }

    /// One event the timeline emits once.
    private enum Step {
        case start(TaskEvent.Phase)
        case end(TaskEvent.Phase)
        case acquired
        case released
        case replayed
        case attempt(Int, ended: Bool)
    }

    /// The steps emitted: a bit each for the phases' starts and ends and the connection steps
    /// (no allocation or hashing per event: a hashed set of steps was a tenth of an event
    /// monitor's cost per request), and the connect attempts' edges, which only a new
    /// connection has (an empty set allocates nothing).
    private struct StepSet {
        private static let phaseCount = TaskEvent.Phase.allCases.count
        private var bits: UInt32 = 0
        private var attempts: Set<Int> = []

        /// Inserts `step`; false if it was there.
        mutating func insert(_ step: Step) -> Bool {
            if case .attempt(let index, let ended) = step { return attempts.insert(index * 2 + (ended ? 1 : 0)).inserted }
            let bit = Self.bit(of: step)
            guard bits & bit == 0 else { return false }
            bits |= bit
            return true
        }

        func contains(_ step: Step) -> Bool {
            if case .attempt(let index, let ended) = step { return attempts.contains(index * 2 + (ended ? 1 : 0)) }
            return bits & Self.bit(of: step) != 0
        }

        /// Starts take the first `phaseCount` bits, ends the next as many, then the connection
        /// steps.
        private static func bit(of step: Step) -> UInt32 {
            let count = phaseCount
            switch step {
            case .start(let phase): return 1 << ordinal(of: phase)
            case .end(let phase): return 1 << (ordinal(of: phase) + count)
            case .acquired: return 1 << (2 * count)
            case .released: return 1 << (2 * count + 1)
            case .replayed: return 1 << (2 * count + 2)
            case .attempt: return 0  // kept in `attempts`
            }
        }

        private static func ordinal(of phase: TaskEvent.Phase) -> Int {
            switch phase {
            case .call: 0
            case .connectionWait: 1
            case .domainLookup: 2
            case .connect: 3
            case .secureConnect: 4
            case .requestHeaders: 5
            case .requestBody: 6
            case .responseHeaders: 7
            case .responseBody: 8
            }
        }
    }

    /// An event without its hop (the caller adds it).
    typealias Entry = (kind: TaskEvent.Kind, date: Date)

    /// The events a snapshot of the exchange's metrics brings (the engine's
    /// `metricsUpdated`, or the final metrics).
    mutating func advance(to metrics: EngineMetrics) -> [Entry] {
        var out: [Entry] = []
        emit(.start(.connectionWait), .started(.connectionWait), metrics.fetchStart, into: &out)
        if let replayed = metrics.replayedAttempts.first {
            emit(
                .replayed,
                .decision(.replayedOnNewConnection(reason: "the reused connection closed before any response byte arrived")),
                replayed.requestStart ?? replayed.fetchStart, into: &out)
        }
        guard let requestStart = metrics.requestStart else { return out }
        if !metrics.isReusedConnection {
            if let start = metrics.domainLookupStart {
                emit(.start(.domainLookup), .started(.domainLookup), start, into: &out)
                emit(.end(.domainLookup), .ended(.domainLookup), metrics.domainLookupEnd ?? start, into: &out)
            }
            if let start = metrics.connectStart {
                emit(.start(.connect), .started(.connect), start, into: &out)
                emitAttempts(metrics.connectAttempts, into: &out)
                if let tlsStart = metrics.secureConnectionStart {
                    emit(.start(.secureConnect), .started(.secureConnect), tlsStart, into: &out)
                    emit(.end(.secureConnect), .ended(.secureConnect), metrics.secureConnectionEnd ?? tlsStart, into: &out)
                }
                emit(.end(.connect), .ended(.connect), metrics.connectEnd ?? requestStart, into: &out)
            }
        }
        emit(.end(.connectionWait), .ended(.connectionWait), requestStart, into: &out)
        emit(.acquired, .connectionAcquired(Self.connection(of: metrics)), requestStart, into: &out)
        emit(.start(.requestHeaders), .started(.requestHeaders), requestStart, into: &out)
        emit(.end(.requestHeaders), .ended(.requestHeaders), requestStart, into: &out)
        if hasBody {
            emit(.start(.requestBody), .started(.requestBody), requestStart, into: &out)
            if let end = metrics.requestEnd {
                emit(.end(.requestBody), .ended(.requestBody), end, into: &out)
            }
        }
        if let responseStart = metrics.responseStart {
            emit(.start(.responseHeaders), .started(.responseHeaders), responseStart, into: &out)
        }
        return out
    }

    /// The final response head was handled at `date`.
    mutating func responseHeadReceived(at date: Date) -> [Entry] {
        var out: [Entry] = []
        emit(.start(.responseHeaders), .started(.responseHeaders), date, into: &out)
        emit(.end(.responseHeaders), .ended(.responseHeaders), date, into: &out)
        return out
    }

    /// The first response body chunk was handled at `date`.
    mutating func responseBodyReceived(at date: Date) -> [Entry] {
        guard emitted.contains(.end(.responseHeaders)) else { return [] }
        var out: [Entry] = []
        emit(.start(.responseBody), .started(.responseBody), date, into: &out)
        return out
    }

    /// The exchange ended with its final `metrics`, failed with `error` when it did. Every
    /// phase still open ends (with `failed` for the one the failure happened in and those
    /// around it), and the connection, when it had one, is released.
    mutating func ended(with metrics: EngineMetrics, error: (any Error)?, at now: Date) -> [Entry] {
        var out = advance(to: metrics)
        let end = metrics.responseEnd ?? now
        if metrics.responseStart != nil || emitted.contains(.end(.responseHeaders)) {
            emit(.start(.responseHeaders), .started(.responseHeaders), metrics.responseStart ?? end, into: &out)
            if error == nil || emitted.contains(.start(.responseBody)) || metrics.responseBodyBytesReceived > 0 {
                emit(.end(.responseHeaders), .ended(.responseHeaders), metrics.responseStart ?? end, into: &out)
            }
        }
        if error == nil, emitted.contains(.end(.responseHeaders)) {
            emit(.start(.responseBody), .started(.responseBody), metrics.responseStart ?? end, into: &out)
        }
        if let error, metrics.requestStart == nil {
            // Never had a connection: the setup step it failed in opens and fails here.
            if let phase = Self.setupPhase(failedWith: error, metrics: metrics) {
                emit(.start(phase), .started(phase), end, into: &out)
            }
        }
        for phase in Self.closingOrder where emitted.contains(.start(phase)) && !emitted.contains(.end(phase)) {
            emit(.end(phase), error.map { .failed(phase, error: $0) } ?? .ended(phase), end, into: &out)
        }
        if emitted.contains(.acquired) {
            emit(.released, .connectionReleased, end, into: &out)
        }
        return out
    }

    /// The phases an end closes when still open, innermost first.
    private static let closingOrder: [TaskEvent.Phase] = [
        .responseBody, .responseHeaders, .requestBody, .requestHeaders, .secureConnect, .connect, .domainLookup,
        .connectionWait,
    ]

    /// The connect attempts' starts and ends, in the order they happened.
    private mutating func emitAttempts(_ attempts: [EngineMetrics.ConnectAttempt], into out: inout [Entry]) {
        var edges: [(date: Date, step: Step, kind: TaskEvent.Kind)] = []
        for (index, attempt) in attempts.enumerated() {
            edges.append((attempt.start, .attempt(index, ended: false), .connectAttemptStarted(address: attempt.address, port: attempt.port)))
            edges.append(
                (attempt.end, .attempt(index, ended: true),
                 .connectAttemptEnded(address: attempt.address, port: attempt.port, error: attempt.error)))
        }
        // Stable: an attempt's start stays before its end when both carry the same instant.
        for edge in edges.enumerated().sorted(by: { ($0.element.date, $0.offset) < ($1.element.date, $1.offset) }) {
            emit(edge.element.step, edge.element.kind, edge.element.date, into: &out)
        }
    }

    private mutating func emit(_ step: Step, _ kind: TaskEvent.Kind, _ date: Date, into out: inout [Entry]) {
        guard emitted.insert(step) else { return }
        let date = max(date, lastDate ?? date)
        lastDate = date
        out.append((kind, date))
    }

    /// The setup step a request that never had a connection failed in: from how far the setup
    /// got, else from the error.
    static func setupPhase(failedWith error: any Error, metrics: EngineMetrics) -> TaskEvent.Phase? {
        switch metrics.connectionSetupPhase {
        case .resolving?: return .domainLookup
        case .connecting?, .proxyHandshake?: return .connect
        case .tlsHandshake?: return .secureConnect
        case .established?: return nil
        case nil: break
        }
        var engineError = error as? EngineError
        if case .engine(let wrapped)? = error as? CourierError { engineError = wrapped }
        switch engineError {
        case .dnsFailure?: return .domainLookup
        case .cannotConnect?, .proxyFailed?: return .connect
        case .tlsHandshakeFailed?, .serverTrustRejected?: return .secureConnect
        default: return nil
        }
    }

    /// The connection the metrics describe.
    static func connection(of metrics: EngineMetrics) -> TaskEvent.Connection {
        TaskEvent.Connection(
            isReused: metrics.isReusedConnection, networkProtocol: metrics.networkProtocolName,
            remoteAddress: metrics.remoteAddress, remotePort: metrics.remotePort,
            tlsProtocolVersion: metrics.tlsProtocolVersion, coalescedOnto: metrics.coalescedConnectionHost)
    }
}
