import Courier

/// An event monitor that does nothing with what it receives: what attaching one costs, with or
/// without task events.
struct NoOpMonitor: SessionEventMonitor {
    let receivesTaskEvents: Bool

    func task(_ task: SessionTask, didReceive event: TaskEvent) {}
    func task(_ task: SessionTask, didFinishExchange exchange: TaskExchange) {}
}
