import Dispatch
public import Foundation
import Synchronization

/// AFNetworking's `AFNetworkActivityIndicatorManager`: counts the requests in flight in every
/// session manager and shows an activity indicator while there are some, after an activation
/// delay (so short requests never flash it) and until a completion delay has passed (so
/// back-to-back requests show one indicator).
///
/// - Counts ``Foundation/NSNotification/Name/courierTaskDidResume`` (+1) and
///   ``Foundation/NSNotification/Name/courierTaskDidSuspend`` / ``Foundation/NSNotification/Name/courierTaskDidComplete``
///   (−1, never below 0) of tasks with a URL in their original request (and passing
///   ``taskFilter``, when set), plus ``incrementActivityCount()`` / ``decrementActivityCount()``.
///   Each task counts once while it runs: a second resume adds nothing, and only a task counted
///   takes one off (a task cancelled while suspended posts suspend then complete; AFN took two
///   off, hiding the indicator while other requests ran). A resume that arrives once the task
///   has completed adds nothing (a session posts a task's notifications in the order of its
///   transitions, so its completion still follows; one posted out of order, by hand, can't
///   count a finished task for good).
/// - ``isEnabled`` is false by default: nothing is shown until an app turns it on. Turning it off
///   hides the indicator.
/// - What "show" means is the block given to ``setNetworkingActivityActionWithBlock(_:)``; it
///   runs on a serial queue of the manager's, once per change of visibility, in order. (AFN's
///   default, `UIApplication.networkActivityIndicatorVisible`, is deprecated on iOS 13+ and has no
///   Linux counterpart; without a block only ``isNetworkActivityIndicatorVisible`` changes.)
///
/// Thread-safe.
public final class NetworkActivityIndicatorManager: Sendable {
    private struct State {
        var machine = NetworkActivityIndicatorStateMachine()
        var activityCount = 0
        var isEnabled = false
        var action: (@Sendable (Bool) -> Void)?
        var taskFilter: (@Sendable (SessionTask) -> Bool)?
        /// The tasks counted as running (held until they suspend or complete, so an identifier
        /// is never a later task's).
        var runningTasks: [ObjectIdentifier: SessionTask] = [:]
    }

    /// The manager apps share (observes `NotificationCenter.default`).
    public static let shared = NetworkActivityIndicatorManager()

    private let state = Mutex(State())
    private let clock: any NetworkActivityClock
    private let actionQueue = DispatchQueue(label: "courier.network-activity.action")
    private let notificationCenter: NotificationCenter
    private let observers = Mutex(ObserverTokens(tokens: []))

    /// @unchecked: the tokens are opaque handles that are only handed back to
    /// `removeObserver(_:)` in `deinit`; nothing reads or mutates them.
    private struct ObserverTokens: @unchecked Sendable {
        var tokens: [any NSObjectProtocol]
    }

    /// A manager observing `notificationCenter` (default `.default`, where session managers post),
    /// timed by ``DispatchNetworkActivityClock``.
    public convenience init(notificationCenter: NotificationCenter = .default) {
        self.init(notificationCenter: notificationCenter, clock: DispatchNetworkActivityClock())
    }

    /// A manager observing `notificationCenter`, timed by `clock` (inject one to test the delays).
    public init(notificationCenter: NotificationCenter, clock: any NetworkActivityClock) {
        self.clock = clock
        self.notificationCenter = notificationCenter
        let started: @Sendable (Notification) -> Void = { [weak self] notification in
            guard let self, let task = notification.object as? SessionTask, self.counts(task) else { return }
            self.changeCount(by: 1, task: task)
        }
        let finished: @Sendable (Notification) -> Void = { [weak self] notification in
            guard let self, let task = notification.object as? SessionTask else { return }
            self.changeCount(by: -1, task: task)
        }
        let tokens = [
            notificationCenter.addObserver(forName: .courierTaskDidResume, object: nil, queue: nil, using: started),
            notificationCenter.addObserver(forName: .courierTaskDidSuspend, object: nil, queue: nil, using: finished),
            notificationCenter.addObserver(forName: .courierTaskDidComplete, object: nil, queue: nil, using: finished),
        ]
        observers.withLock { $0 = ObserverTokens(tokens: tokens) }
    }

    deinit {
        let tokens = observers.withLock { $0.tokens }
        for token in tokens { notificationCenter.removeObserver(token) }
    }

    /// Whether the manager shows anything. Default false (AFN). Setting false hides the
    /// indicator at once; setting true takes effect at the next change of the activity count.
    public var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set {
            let wakes = state.withLock { state in
                state.isEnabled = newValue
                return newValue ? [] : perform(state.machine.disable(), action: state.action)
            }
            schedule(wakes)
        }
    }

    /// Seconds of activity before the indicator shows. Default 1.0. Applies to the next delay.
    public var activationDelay: TimeInterval {
        get { state.withLock { $0.machine.activationDelay } }
        set { state.withLock { $0.machine.activationDelay = newValue } }
    }

    /// Seconds without activity before the indicator hides. Default 0.17. Applies to the next delay.
    public var completionDelay: TimeInterval {
        get { state.withLock { $0.machine.completionDelay } }
        set { state.withLock { $0.machine.completionDelay = newValue } }
    }

    /// Whether the indicator is shown now.
    public var isNetworkActivityIndicatorVisible: Bool { state.withLock { $0.machine.isVisible } }

    /// Requests in flight, as counted (never below 0).
    public var activityCount: Int { state.withLock { $0.activityCount } }

    /// Which tasks count; nil (default) counts every task with a URL, as AFN does. Use it to leave
    /// out background traffic, or to watch one manager's tasks (by host, by `taskDescription`).
    public var taskFilter: (@Sendable (SessionTask) -> Bool)? {
        get { state.withLock { $0.taskFilter } }
        set { state.withLock { $0.taskFilter = newValue } }
    }

    /// Sets the block that shows or hides the indicator (true: show). Runs on the manager's serial
    /// queue, once per change. nil removes it.
    public func setNetworkingActivityActionWithBlock(_ block: (@Sendable (Bool) -> Void)?) {
        state.withLock { $0.action = block }
    }

    /// Counts one more request in flight (for work Courier does not see).
    public func incrementActivityCount() {
        changeCount(by: 1)
    }

    /// Counts one request fewer (never below 0).
    public func decrementActivityCount() {
        changeCount(by: -1)
    }

    // MARK: - Internals

    private func counts(_ task: SessionTask) -> Bool {
        guard task.originalRequest?.url != nil else { return false }
        let filter = state.withLock { $0.taskFilter }
        return filter?(task) ?? true
    }

    /// Changes the count by `delta`; for a `task`'s notification only when it starts or stops
    /// being counted as running.
    private func changeCount(by delta: Int, task: SessionTask? = nil) {
        let now = clock.now
        let wakes = state.withLock { state -> [Double] in
            if let task {
                let id = ObjectIdentifier(task)
                // A task already completed is not counted: its resume is delivered late (its
                // completion follows: the session posts in transition order, TaskNotificationOutbox)
                // or was posted out of order (by hand: counted, it would stay counted for good).
                // Read under this lock, so a completion posted after the check finds it counted.
                let changed = delta > 0
                    ? task.state != .completed && state.runningTasks.updateValue(task, forKey: id) == nil
                    : state.runningTasks.removeValue(forKey: id) != nil
                guard changed else { return [] }
            }
            let (sum, overflow) = state.activityCount.addingReportingOverflow(delta)
            state.activityCount = overflow ? state.activityCount : max(0, sum)
            let actions = state.machine.activityChanged(
                isActivityOccurring: state.activityCount > 0, isEnabled: state.isEnabled, now: now)
            return perform(actions, action: state.action)
        }
        schedule(wakes)
    }

    private func timerFired() {
        let now = clock.now
        let wakes = state.withLock { state in
            perform(state.machine.timerFired(isActivityOccurring: state.activityCount > 0, now: now), action: state.action)
        }
        schedule(wakes)
    }

    /// Runs under the state lock: visibility changes are queued in order; the wake-ups are
    /// returned, to be scheduled once the lock is released (a clock may run them at once).
    private func perform(_ actions: [NetworkActivityIndicatorStateMachine.Action], action: (@Sendable (Bool) -> Void)?) -> [Double] {
        var wakes: [Double] = []
        for step in actions {
            switch step {
            case .setVisible(let visible):
                if let action { actionQueue.async { action(visible) } }
            case .wake(let deadline):
                wakes.append(deadline)
            }
        }
        return wakes
    }

    private func schedule(_ wakes: [Double]) {
        for deadline in wakes {
            clock.schedule(at: deadline) { [weak self] in self?.timerFired() }
        }
    }
}
