/// AFNetworkActivityIndicatorManager's state machine as a value: not active → delaying start →
/// active → delaying end → not active, with renewed activity during the end delay returning to
/// active. Times are seconds on any monotonic scale the caller chooses; timers are deadlines the
/// caller wakes the machine at (a stale wake-up is ignored, so nothing needs cancelling).
struct NetworkActivityIndicatorStateMachine: Sendable, Equatable {
    enum State: Sendable, Equatable {
        case notActive
        /// Waiting `activationDelay` before showing, so short requests never flash the indicator.
        case delayingStart(until: Double)
        case active
        /// Waiting `completionDelay` before hiding, so back-to-back requests show one indicator.
        case delayingEnd(until: Double)
    }

    /// What the caller must do.
    enum Action: Sendable, Equatable {
        /// Call the visibility block with true / false.
        case setVisible(Bool)
        /// Call ``timerFired(isActivityOccurring:now:)`` at (or after) this time.
        case wake(at: Double)
    }

    private(set) var state: State = .notActive
    private(set) var isVisible = false
    var activationDelay: Double
    var completionDelay: Double

    init(activationDelay: Double = 1.0, completionDelay: Double = 0.17) {
        self.activationDelay = activationDelay
        self.completionDelay = completionDelay
    }

    /// The activity count changed (AFN's `updateCurrentStateForNetworkActivityChange`; nothing
    /// happens while disabled).
    mutating func activityChanged(isActivityOccurring: Bool, isEnabled: Bool, now: Double) -> [Action] {
        guard isEnabled else { return [] }
        switch state {
        case .notActive:
            return isActivityOccurring ? enter(.delayingStart(until: Self.later(now, activationDelay))) : []
        case .delayingStart:
            return []  // the activation timer decides
        case .active:
            return isActivityOccurring ? [] : enter(.delayingEnd(until: Self.later(now, completionDelay)))
        case .delayingEnd:
            return isActivityOccurring ? enter(.active) : []
        }
    }

    /// A wake-up requested by `.wake(at:)` arrived; ignored unless it is due for the current state.
    mutating func timerFired(isActivityOccurring: Bool, now: Double) -> [Action] {
        switch state {
        case .delayingStart(let until) where now >= until:
            return enter(isActivityOccurring ? .active : .notActive)
        case .delayingEnd(let until) where now >= until:
            return enter(.notActive)
        default:
            return []
        }
    }

    /// `enabled = NO` in AFN: straight to not active (hiding the indicator if shown).
    mutating func disable() -> [Action] {
        enter(.notActive)
    }

    private mutating func enter(_ next: State) -> [Action] {
        guard next != state else { return [] }
        state = next
        switch next {
        case .notActive: return setVisible(false)
        case .delayingStart(let until), .delayingEnd(let until): return [.wake(at: until)]
        case .active: return setVisible(true)
        }
    }

    private mutating func setVisible(_ visible: Bool) -> [Action] {
        guard visible != isVisible else { return [] }
        isVisible = visible
        return [.setVisible(visible)]
    }

    /// `now + delay`, with a negative, NaN or infinite delay read as 0 and the sum kept finite.
    static func later(_ now: Double, _ delay: Double) -> Double {
        let safeDelay = delay.isFinite && delay > 0 ? delay : 0
        let sum = now + safeDelay
        return sum.isFinite ? sum : now
    }
}
