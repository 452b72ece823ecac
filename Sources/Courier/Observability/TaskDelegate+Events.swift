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
/// (before anything else of the task exists); the events made while its engine events are
/// handled (on an event loop or the task's callback queue) wait for the end of that burst and
/// go to the session's ``MonitorEventQueue`` together, unless the task ends first
/// (``TaskCallbackQueue/tellMonitors(_:canWait:)``); the task's end makes what still waits, then
/// `callEnd`, last, where it finishes (see ``TaskDelegate/complete(withResponse:error:metrics:onCallbackQueue:)``;
/// an awaited task's end runs in the awaiting Swift task, so the call returns after its
/// monitors heard it all).
extension TaskDelegate {
    /// Whether this task reports events (it had monitors when it started).
    var reportsEvents: Bool { eventsOn.load(ordering: .relaxed) }

    /// Makes `calls` (monitor calls) behind the task's earlier ones, off the event loops (see
    /// ``TaskCallbackQueue/tellMonitors(_:canWait:)``).
    func tellMonitors(_ calls: @escaping @Sendable () -> Void, canWait: Bool = false) {
        toldMonitors.store(true, ordering: .releasing)
        callbacks.tellMonitors(calls, canWait: canWait)
    }

    /// Makes `call` for each of `monitors` (the manager's, read by the caller) with this task,
    /// behind the task's earlier monitor calls; nothing when there are none.
    func tellEach(_ monitors: [any SessionEventMonitor], _ call: @escaping @Sendable (any SessionEventMonitor, SessionTask) -> Void) {
        guard !monitors.isEmpty else { return }
        let task = self.task
        tellMonitors { for monitor in monitors { call(monitor, task) } }
    }

    /// The task starts: reads the monitors and reports `callStart`, right here (the resuming
    /// thread): nothing else of the task's can be reported yet, and a queue hop per task
    /// showed in the events' cost.
    func eventsCallStarted() {
        let (any, monitors) = environment.settings.withLock { (!$0.monitors.isEmpty, $0.taskEventMonitors) }
        guard any else { return }
        monitored.store(true, ordering: .relaxed)
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

    /// Reports `kind`: queued for the monitors behind the task's earlier events.
    func reportEvent(_ kind: TaskEvent.Kind, date: Date = Date()) {
        let (monitors, hop) = run.withLock { ($0.events.monitors, max($0.events.hop, 0)) }
        guard !monitors.isEmpty else { return }
        let task = self.task
        let event = TaskEvent(kind: kind, date: date, hop: hop)
        tellMonitors { for monitor in monitors { monitor.task(task, didReceive: event) } }
    }

    /// Advances the current exchange's timeline with `step` and reports what it brings.
    /// `canWait`: see ``TaskCallbackQueue/tellMonitors(_:canWait:)``.
    func reportTimeline(canWait: Bool = false, _ step: (inout TaskEventTimeline) -> [TaskEventTimeline.Entry]) {
        let (monitors, hop, entries): ([any SessionEventMonitor], Int, [TaskEventTimeline.Entry]) = run.withLock { run in
            guard !run.events.monitors.isEmpty, var timeline = run.events.timeline else { return ([], 0, []) }
            run.events.timeline = nil  // the only copy is mutated in place
            let entries = step(&timeline)
            run.events.timeline = timeline
            return (run.events.monitors, run.events.hop, entries)
        }
        guard !entries.isEmpty else { return }
        let task = self.task
        tellMonitors(
            {
                for entry in entries {
                    let event = TaskEvent(kind: entry.kind, date: entry.date, hop: hop)
                    for monitor in monitors { monitor.task(task, didReceive: event) }
                }
            }, canWait: canWait)
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
        tellMonitors { for monitor in monitors { monitor.task(task, didFinishExchange: exchange) } }
    }

    /// The task ends: `callEnd`, or `callFailed` with its error, told right here (where the task
    /// finishes, after its earlier monitor calls were made).
    func eventsCallEnded(error: (any Error)?) {
        guard reportsEvents else { return }
        let (monitors, hop) = run.withLock { ($0.events.monitors, max($0.events.hop, 0)) }
        let event = TaskEvent(kind: error.map { .failed(.call, error: $0) } ?? .ended(.call), date: Date(), hop: hop)
        let task = self.task
        for monitor in monitors { monitor.task(task, didReceive: event) }
    }
}
