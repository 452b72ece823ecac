import Foundation

/// The I/O of ``ConnectivityRetrier``: listening to a ``NetworkReachabilityManager`` until it
/// says reachable, at most for the maximum wait, and ending at once when the Swift task that
/// waits is cancelled (the session cancels it when the session task is cancelled).
enum ConnectivityWait {
    /// A manager for `host` (an IP literal, bracketed or not, or a host name); nil for no host
    /// or a malformed one.
    static func manager(forHost host: String?) -> NetworkReachabilityManager? {
        guard let host, !host.isEmpty else { return nil }
        if let manager = try? NetworkReachabilityManager(address: host) { return manager }
        return NetworkReachabilityManager(domain: host)
    }

    /// Waits on `manager`: its first known status decides whether to wait (see
    /// `ConnectivityRetryRule.verdict(for:)`); `waiting` is called when the wait for a route
    /// begins. `startsMonitoring`: start the manager after subscribing to its updates.
    static func wait(
        on manager: NetworkReachabilityManager, startsMonitoring: Bool, maximumWait: TimeInterval,
        waiting: @escaping @Sendable () -> Void
    ) async -> ConnectivityRetryRule.WaitOutcome {
        // Subscribe first, so no change between the start and the subscription is missed.
        let updates = manager.statusUpdates
        if startsMonitoring { manager.startMonitoring() }
        let outcome = await withTaskGroup(of: ConnectivityRetryRule.WaitOutcome?.self) { group in
            group.addTask {
                var sawUnreachable = false
                for await status in updates {
                    switch ConnectivityRetryRule.verdict(for: status) {
                    case .reachable: return sawUnreachable ? .becameReachable : .alreadyReachable
                    case .waitForRoute:
                        if !sawUnreachable { waiting() }
                        sawUnreachable = true
                    case .undetermined: continue
                    }
                }
                return nil  // cancelled, or the manager went away
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int64((min(maximumWait, RetryRule.maximumBackoff) * 1000).rounded(.up))))
                return Task.isCancelled ? nil : .timedOut
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if Task.isCancelled { return .cancelled }
        return outcome ?? .timedOut
    }
}
