import Synchronization

/// Posts one task's notifications (resume, suspend, completion, with their event-monitor
/// calls) in the order of the state transitions that caused them: never under the task's
/// lock (an observer may call back into the task) and without any thread waiting for another.
///
/// A resume or suspension enqueues its post while it holds the task's lock, so posts are
/// queued in the order of the transitions; the completion enqueues once its end is delivered
/// (after every transition that can post). Whoever enqueues while nobody is posting gets the
/// turn: it posts its own notification after releasing the lock, then whatever others enqueued
/// meanwhile, oldest first (``drain(after:)``); the others only leave their post and return.
/// So a resume posted late by one thread is never overtaken by the completion a cancel on
/// another thread caused, nor a suspension by the resume that followed it; a post an observer
/// causes from inside another post comes after that one.
///
/// Cost when nothing needs ordering (one thread at a time, the common case): two atomic
/// operations per post, no lock and no allocation. The queue (an array under its own lock) is
/// touched only when a post arrives while another thread (or an outer post) has the turn.
///
/// Stored in the task's driver (``TaskDelegate``, ``DirectTaskRunner``); thread-safe.
struct TaskNotificationOutbox: ~Copyable, Sendable {
    /// One notification to post, with its monitor calls.
    typealias Post = @Sendable () -> Void

    /// Posts enqueued and not yet finished, the turn's own included; 0: nobody has the turn.
    private let outstanding = Atomic<Int>(0)
    /// Posts waiting for the thread that has the turn, oldest first.
    private let waiting = Mutex<[Post]>([])

    init() {}

    /// Enqueues a post. Call it where the transition is decided (under the task's lock for a
    /// resume or suspension), so posts queue in transition order.
    ///
    /// - Parameter post: makes the post to leave for the thread that has the turn; called
    ///   only then (so the common case makes no closure).
    /// - Returns: true when the caller has the turn: it must post its own notification with
    ///   ``drain(after:)`` once it holds no lock. False: the post was left for the thread that
    ///   has the turn; the caller posts nothing.
    func enqueue(_ post: () -> Post) -> Bool {
        if outstanding.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged { return true }
        return waiting.withLock { waiting in
            // Counted and queued together: a count the turn's holder sees is in the queue by
            // the time it takes the lock. The holder may have left since the exchange failed.
            if outstanding.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue == 0 { return true }
            waiting.append(post())
            return false
        }
    }

    /// For the caller ``enqueue(_:)`` gave the turn (holding no lock): posts `own`, then what
    /// others enqueued meanwhile, in order, until nothing is left; then gives the turn up.
    func drain(after own: () -> Void) {
        own()
        var posted = 1
        while outstanding.wrappingSubtract(posted, ordering: .acquiringAndReleasing).newValue != 0 {
            let batch = waiting.withLock { waiting in
                defer { waiting = [] }
                return waiting
            }
            assert(!batch.isEmpty, "a counted post is queued before its lock is released")
            for post in batch { post() }
            posted = batch.count
        }
    }
}
