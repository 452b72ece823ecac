import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1

/// A task's ``TaskEvent`` bookkeeping, kept in the task's run state: the monitors the events go
/// to (read once, when the task starts: none means nothing is built and nothing is paid), the
/// current exchange's ``TaskEventTimeline`` and its hop number.
struct TaskEventState {
    var monitors: [any SessionEventMonitor] = []
    var timeline: TaskEventTimeline?
    /// The current exchange's hop (-1 before the first).
    var hop = -1
    /// Whether a body chunk of the current exchange was reported.
    var sawBody = false
    /// The current exchange's request as sent, and its response head (any final one, a
    /// redirect's included), for its ``TaskExchange``.
    var sent: (method: String, url: URL, headers: HTTPHeaders)?
    var head: HTTPResponseHead?
}

/// Where a task's ``TaskEvent``s are made and delivered. Every event reaches the monitors one at a
/// time and in order, off the event loops: `callStart` on the thread that resumes the task
/// (before anything else of the task exists), the events made while handling the engine's events
/// right there on the task's callback queue (``TaskCallbackQueue``), and the others (the cache
/// and HSTS decisions made as a hop is sent, an interceptor's decision) queued there behind what
/// is already there. With monitors, the task's end starts
/// from that queue once everything queued before it was delivered (see
/// ``TaskDelegate/complete(withResponse:error:metrics:)``), so `callEnd` comes last, never
/// beside another of the task's events (an awaited task's end runs in the awaiting Swift task).
extension TaskDelegate {
    /// Whether this task reports events (it had monitors when it started).
    var reportsEvents: Bool { eventsOn.load(ordering: .relaxed) }

    /// The task starts: reads the monitors and reports `callStart`, right here (the resuming
    /// thread): nothing else of the task's can be delivered yet, and a queue hop per task
    /// showed in the events' cost.
    func eventsCallStarted() {
        let monitors = environment.monitors.filter(\.receivesTaskEvents)
        guard !monitors.isEmpty else { return }
        run.withLock { $0.events.monitors = monitors }
        eventsOn.store(true, ordering: .relaxed)
        let task = self.task
        let event = TaskEvent(kind: .started(.call), date: Date(), hop: 0)
        for monitor in monitors { monitor.task(task, didReceive: event) }
    }

    /// A hop is about to be sent: a new timeline. Returns whether events are on.
    func eventsExchangeStarting(hasBody: Bool) -> Bool {
        run.withLock { run in
            guard !run.events.monitors.isEmpty else { return false }
            run.events.hop += 1
            run.events.timeline = TaskEventTimeline(hasBody: hasBody)
            run.events.sawBody = false
            run.events.sent = nil
            run.events.head = nil
            return true
        }
    }

    /// Reports `kind` from outside the callback queue: queued behind what is there.
    func reportEventLater(_ kind: TaskEvent.Kind, date: Date = Date()) {
        let (monitors, hop) = run.withLock { ($0.events.monitors, max($0.events.hop, 0)) }
        guard !monitors.isEmpty else { return }
        let task = self.task
        let event = TaskEvent(kind: kind, date: date, hop: hop)
        callbacks.async { for monitor in monitors { monitor.task(task, didReceive: event) } }
    }

    /// Reports `kind` now (on the callback queue).
    func reportEvent(_ kind: TaskEvent.Kind, date: Date = Date()) {
        let (monitors, hop) = run.withLock { ($0.events.monitors, max($0.events.hop, 0)) }
        guard !monitors.isEmpty else { return }
        let event = TaskEvent(kind: kind, date: date, hop: hop)
        let task = self.task
        for monitor in monitors { monitor.task(task, didReceive: event) }
    }

    /// Advances the current exchange's timeline with `step` and reports what it brings (on the
    /// callback queue).
    func reportTimeline(_ step: (inout TaskEventTimeline) -> [TaskEventTimeline.Entry]) {
        let (monitors, hop, entries): ([any SessionEventMonitor], Int, [TaskEventTimeline.Entry]) = run.withLock { run in
            guard !run.events.monitors.isEmpty, var timeline = run.events.timeline else { return ([], 0, []) }
            run.events.timeline = nil  // the only copy is mutated in place
            let entries = step(&timeline)
            run.events.timeline = timeline
            return (run.events.monitors, run.events.hop, entries)
        }
        guard !entries.isEmpty else { return }
        let task = self.task
        for entry in entries {
            let event = TaskEvent(kind: entry.kind, date: entry.date, hop: hop)
            for monitor in monitors { monitor.task(task, didReceive: event) }
        }
    }

    /// A body chunk was handled: `responseBodyStart` for the exchange's first one. Per chunk:
    /// a task with no event monitor pays one relaxed atomic load here, no lock.
    func eventsBodyChunk() {
        guard eventsOn.load(ordering: .relaxed) else { return }
        let first = run.withLock { run -> Bool in
            guard !run.events.monitors.isEmpty, !run.events.sawBody else { return false }
            run.events.sawBody = true
            return true
        }
        if first {
            let now = Date()
            reportTimeline { $0.responseBodyReceived(at: now) }
        }
    }

    /// The request of the current exchange, as handed to the engine.
    func eventsRequestSent(_ request: EngineRequest) {
        run.withLock { run in
            guard !run.events.monitors.isEmpty else { return }
            run.events.sent = (request.method, request.url, request.headers)
        }
    }

    /// A final response head of the current exchange arrived.
    func eventsHeadReceived(_ head: HTTPResponseHead) {
        run.withLock { run in
            guard !run.events.monitors.isEmpty else { return }
            run.events.head = head
        }
        reportTimeline { $0.responseHeadReceived(at: Date()) }
    }

    /// The exchange ended: what the cache and the engine did that only the end tells
    /// (revalidated, replayed), then the open phases end and the connection is released, and
    /// the monitors get the exchange's ``TaskExchange``.
    func eventsExchangeEnded(metrics: EngineMetrics, error: EngineError?) {
        guard reportsEvents else { return }
        if metrics.revalidatedFromCache {
            reportEvent(.decision(.cache(.revalidated)), date: metrics.responseStart ?? Date())
        }
        let now = Date()
        reportTimeline { $0.ended(with: metrics, error: error, at: now) }
        let (monitors, hop, sent, head) = run.withLock { ($0.events.monitors, max($0.events.hop, 0), $0.events.sent, $0.events.head) }
        guard let sent else { return }  // answered by the cache without a request
        let exchange = TaskExchange(
            hop: hop, method: sent.method, url: sent.url,
            requestFields: sent.headers,
            statusCode: head.map { Int($0.status.code) }, reasonPhrase: head?.status.reasonPhrase,
            httpVersion: head?.version.spelled,
            responseFields: head?.headers ?? [:],
            metrics: metrics, error: error.map { CourierError.engine($0) })
        let task = self.task
        for monitor in monitors { monitor.task(task, didFinishExchange: exchange) }
    }

    /// The task ends (on the callback queue): `callEnd`, or `callFailed` with its error.
    func eventsCallEnded(error: (any Error)?) {
        guard reportsEvents else { return }
        reportEvent(error.map { .failed(.call, error: $0) } ?? .ended(.call))
    }
}
