extension NetworkReachabilityManager {
    /// Whether the target can be reached, and how: `AFNetworkReachabilityStatus`, with its raw
    /// values.
    public enum Status: Int, Sendable, CaseIterable, CustomStringConvertible {
        /// Not evaluated yet (before the first evaluation after ``startMonitoring()``).
        case unknown = -1
        /// No usable path to the target.
        case notReachable = 0
        /// Reachable through a cellular (WWAN) interface.
        case reachableViaWWAN = 1
        /// Reachable through any other interface (Wi-Fi, Ethernet, loopback, ...): AFNetworking
        /// reports every non-cellular path as Wi-Fi.
        case reachableViaWiFi = 2

        /// `AFNetworkReachabilityStatusForFlags`, exactly: reachable when the flags say
        /// ``ReachabilityFlags/reachable`` and either no connection is required or one is made
        /// automatically (on demand or on traffic) without user intervention; then WWAN when
        /// ``ReachabilityFlags/isWWAN`` is set, else Wi-Fi.
        public init(flags: ReachabilityFlags) {
            let reachable = flags.contains(.reachable)
            let needsConnection = flags.contains(.connectionRequired)
            let connectsAutomatically =
                flags.contains(.connectionOnDemand) || flags.contains(.connectionOnTraffic)
            let connectsWithoutUser = connectsAutomatically && !flags.contains(.interventionRequired)
            let isNetworkReachable = reachable && (!needsConnection || connectsWithoutUser)
            if !isNetworkReachable {
                self = .notReachable
            } else if flags.contains(.isWWAN) {
                self = .reachableViaWWAN
            } else {
                self = .reachableViaWiFi
            }
        }

        /// AFNetworking's strings (`AFStringFromNetworkReachabilityStatus`): "Unknown",
        /// "Not Reachable", "Reachable via WWAN", "Reachable via WiFi".
        public var description: String {
            switch self {
            case .unknown: return "Unknown"
            case .notReachable: return "Not Reachable"
            case .reachableViaWWAN: return "Reachable via WWAN"
            case .reachableViaWiFi: return "Reachable via WiFi"
            }
        }

        /// The case's name as the CLI's `--json` prints it: `unknown`, `notReachable`,
        /// `reachableViaWWAN`, `reachableViaWiFi`.
        public var name: String {
            switch self {
            case .unknown: return "unknown"
            case .notReachable: return "notReachable"
            case .reachableViaWWAN: return "reachableViaWWAN"
            case .reachableViaWiFi: return "reachableViaWiFi"
            }
        }
    }
}
