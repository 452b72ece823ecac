import Foundation

/// AFImageDownloader's bookkeeping as a value: merged tasks keyed by URL, the wait queue, the
/// active set and the limit. A `urlIdentifier` is the downloader's merge key
/// (``ImageDownloader/mergeKey(of:)``: the URL's absolute string, plus a suffix for a request
/// carrying credentials). ``ImageDownloader`` feeds it events and performs what it returns
/// (resume, cancel, call handlers); nothing here does I/O, so tests drive it with plain values.
///
/// `Job` is what a merged task runs (a `DataTask` in the downloader); `Handler` is one
/// receipt's callbacks.
struct ImageDownloadQueue<Job, Handler> {
    /// How queued downloads are ordered.
    enum Order: Sendable { case fifo, lifo }

    struct MergedTask {
        /// Distinguishes this task from a later one for the same URL (AFN's merged-task UUID).
        let id: UUID
        let urlIdentifier: String
        let job: Job
        var handlers: [(receiptID: UUID, handler: Handler)]
    }

    /// What ``add(urlIdentifier:receiptID:handler:makeJob:)`` did.
    enum AddOutcome {
        /// Appended to a task already running or queued for that URL.
        case merged(Job)
        /// A new task that must be started now.
        case start(Job)
        /// A new task that waits for a free slot.
        case queued(Job)
    }

    /// What ``cancel(receiptID:urlIdentifier:)`` did.
    struct CancelOutcome {
        /// The removed handler (nil when the receipt was unknown: already done or cancelled).
        var handler: Handler?
        /// The task to cancel, because no handler remains.
        var jobToCancel: Job?
    }

    /// What ``complete(taskID:urlIdentifier:)`` did.
    struct CompletionOutcome {
        /// The handlers to call (empty when the task had been cancelled or replaced).
        var handlers: [Handler]
        /// Queued tasks to start now that a slot is free.
        var jobsToStart: [Job]
    }

    let order: Order
    let maximumActive: Int
    private(set) var merged: [String: MergedTask] = [:]
    /// Merged-task ids (and their URLs) in dequeue order.
    private(set) var waiting: [(id: UUID, urlIdentifier: String)] = []
    /// Ids of tasks started and not yet completed (a cancelled task holds its slot until its
    /// completion arrives, as in AFN: its connection is still being torn down).
    private(set) var active: Set<UUID> = []

    init(order: Order, maximumActive: Int) {
        self.order = order
        self.maximumActive = max(1, maximumActive)
    }

    var activeCount: Int { active.count }
    var queuedCount: Int { waiting.count }

    /// Adds a receipt for `urlIdentifier`: merged into an existing task, else a new task made by
    /// `makeJob(taskID)` that starts now or waits.
    mutating func add(urlIdentifier: String, receiptID: UUID, handler: Handler, makeJob: (UUID) -> Job) -> AddOutcome {
        if var existing = merged[urlIdentifier] {
            existing.handlers.append((receiptID, handler))
            merged[urlIdentifier] = existing
            return .merged(existing.job)
        }
        let id = UUID()
        let job = makeJob(id)
        merged[urlIdentifier] = MergedTask(id: id, urlIdentifier: urlIdentifier, job: job, handlers: [(receiptID, handler)])
        if active.count < maximumActive {
            active.insert(id)
            return .start(job)
        }
        switch order {
        case .fifo: waiting.append((id, urlIdentifier))
        case .lifo: waiting.insert((id, urlIdentifier), at: 0)
        }
        return .queued(job)
    }

    /// Removes the receipt's handler; when none remains the task leaves the table (and the wait
    /// queue) and must be cancelled.
    mutating func cancel(receiptID: UUID, urlIdentifier: String) -> CancelOutcome {
        guard var task = merged[urlIdentifier], let index = task.handlers.firstIndex(where: { $0.receiptID == receiptID })
        else { return CancelOutcome(handler: nil, jobToCancel: nil) }
        let handler = task.handlers.remove(at: index).handler
        guard task.handlers.isEmpty else {
            merged[urlIdentifier] = task
            return CancelOutcome(handler: handler, jobToCancel: nil)
        }
        merged.removeValue(forKey: urlIdentifier)
        waiting.removeAll { $0.id == task.id }
        return CancelOutcome(handler: handler, jobToCancel: task.job)
    }

    /// The task `taskID` finished: its handlers if it is still the URL's current task, and the
    /// queued tasks that may start in the slot it frees.
    mutating func complete(taskID: UUID, urlIdentifier: String) -> CompletionOutcome {
        var handlers: [Handler] = []
        if let task = merged[urlIdentifier], task.id == taskID {
            merged.removeValue(forKey: urlIdentifier)
            waiting.removeAll { $0.id == taskID }
            handlers = task.handlers.map(\.handler)
        }
        active.remove(taskID)
        var jobsToStart: [Job] = []
        while active.count < maximumActive, !waiting.isEmpty {
            let next = waiting.removeFirst()
            guard let task = merged[next.urlIdentifier], task.id == next.id else { continue }
            active.insert(next.id)
            jobsToStart.append(task.job)
        }
        return CompletionOutcome(handlers: handlers, jobsToStart: jobsToStart)
    }
}
