#if os(Linux)
import Synchronization

/// One manager's registration with the monitor: its target, where evaluations go, and for a
/// domain the addresses the name last resolved to.
final class ReachabilityWatch: ReachabilityObservation {
    let target: ReachabilityTarget
    private let report: @Sendable (ReachabilitySnapshot) -> Void
    let monitor: ReachabilityMonitor
    private let state = Mutex(State())

    private struct State {
        var isCancelled = false
        /// nil until the name's first resolution finished.
        var addresses: [ReachabilityAddress]?
        var isResolving = false
        var resolveAgain = false
    }

    init(target: ReachabilityTarget, monitor: ReachabilityMonitor, report: @escaping @Sendable (ReachabilitySnapshot) -> Void) {
        self.target = target
        self.monitor = monitor
        self.report = report
    }

    func cancel() {
        let wasCancelled = state.withLock { state -> Bool in
            defer { state.isCancelled = true }
            return state.isCancelled
        }
        if !wasCancelled { monitor.remove(self) }
    }

    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Hands an evaluation to the manager (nothing once cancelled).
    func deliver(_ snapshot: ReachabilitySnapshot) {
        guard !isCancelled else { return }
        report(snapshot)
    }

    /// The addresses to look up: the target's own, the name's last resolution, or nil while a
    /// name has not resolved yet (nothing to report) and for the default route (no address).
    var addresses: [ReachabilityAddress]? {
        switch target {
        case .defaultRoute: return nil
        case .address(let address): return [address]
        case .domain: return state.withLock { $0.addresses }
        }
    }

    /// Resolves a domain target again (once more after the current resolution if one is
    /// running); the monitor evaluates the watch when the answer is in.
    func resolve() {
        guard case .domain(let name) = target else { return }
        let start = state.withLock { state -> Bool in
            guard !state.isCancelled else { return false }
            guard !state.isResolving else {
                state.resolveAgain = true
                return false
            }
            state.isResolving = true
            return true
        }
        guard start else { return }
        DomainResolver.resolve(name) { [self] addresses in
            let again = state.withLock { state -> Bool in
                state.addresses = addresses
                state.isResolving = false
                defer { state.resolveAgain = false }
                return state.resolveAgain
            }
            monitor.evaluateSoon(self)
            if again { resolve() }
        }
    }
}
#endif
