/// The platform's source of reachability evaluations: the netlink monitor on Linux,
/// `SCNetworkReachability` on Apple platforms, nothing elsewhere (the status stays unknown).
enum ReachabilityEngine {
    /// Starts watching `target`; `report` gets each evaluation (from any thread).
    static func observe(
        _ target: ReachabilityTarget, networkNamespace: String?,
        report: @escaping @Sendable (ReachabilitySnapshot) -> Void
    ) -> any ReachabilityObservation {
        #if canImport(SystemConfiguration)
        return SystemConfigurationReachability(target: target, report: report)
        #elseif os(Linux)
        return ReachabilityMonitor.observe(target, networkNamespace: networkNamespace, report: report)
        #else
        return UnsupportedReachability()
        #endif
    }
}

/// A platform with neither netlink nor SystemConfiguration: nothing is ever reported.
struct UnsupportedReachability: ReachabilityObservation {
    func cancel() {}
}
