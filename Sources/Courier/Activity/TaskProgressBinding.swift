import Synchronization

/// UIProgressView+AFNetworking's `setProgressWith{Upload,Download}ProgressOfTask:`, for any view:
/// calls `update` with the fraction of the bound task's upload or download done, each time it
/// changes, until the task completes.
///
/// The fraction is bytes done ÷ bytes expected, only when the expected count is known (> 0), as
/// AFN's KVO does; otherwise nothing is reported. `update` runs on a task of the binding's own;
/// hop to the main queue in a UIKit view. Thread-safe.
public final class TaskProgressBinding: Sendable {
    private let update: @Sendable (Double) -> Void
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    /// A binding calling `update` with fractions in 0...1.
    public init(update: @escaping @Sendable (Double) -> Void) {
        self.update = update
    }

    deinit { watcher.withLock { $0?.cancel() } }

    /// Follows `direction` of `task` instead of what was bound before (nil: nothing).
    public func bind(to task: SessionTask?, direction: TransferProgress.Direction) {
        let update = update
        let next = task.map { task in
            Task {
                for await progress in task.progressUpdates(direction) {
                    if Task.isCancelled { return }
                    if let fraction = Self.fraction(completed: progress.completedUnitCount, expected: progress.totalUnitCount) {
                        update(fraction)
                    }
                }
            }
        }
        watcher.withLock { current in
            current?.cancel()
            current = next
        }
    }

    /// `completed / expected` clamped to 0...1, or nil when `expected` is unknown (≤ 0).
    static func fraction(completed: Int64, expected: Int64) -> Double? {
        guard expected > 0 else { return nil }
        return min(1, max(0, Double(completed) / Double(expected)))
    }
}
