extension NetworkReachabilityManager {
    /// What an evaluation found about the path to the target: `SCNetworkReachabilityFlags`,
    /// with the same raw values, so that AFNetworking's rule (``Status/init(flags:)``) reads the
    /// same on every platform.
    ///
    /// On Linux the kernel's answer fills in ``reachable`` (a route leaves by an interface that
    /// is administratively up with its carrier on), ``isDirect`` (the route has no gateway),
    /// ``isLocalAddress`` (the target is one of this machine's addresses), ``isWWAN`` (the
    /// interface is a cellular modem: a WWAN, PPP or raw-IP device) and ``transientConnection``
    /// (PPP). The connection-on-demand flags are Apple's and never set there.
    public struct ReachabilityFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The raw `SCNetworkReachabilityFlags` bits.
        public let rawValue: UInt32

        /// Makes flags from raw `SCNetworkReachabilityFlags` bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// The target is reachable through a transient connection, such as PPP.
        public static let transientConnection = ReachabilityFlags(rawValue: 1 << 0)
        /// The target is reachable with the current configuration.
        public static let reachable = ReachabilityFlags(rawValue: 1 << 1)
        /// A connection must be established first (for example a dial-up link).
        public static let connectionRequired = ReachabilityFlags(rawValue: 1 << 2)
        /// A connection is established automatically by traffic to the target.
        public static let connectionOnTraffic = ReachabilityFlags(rawValue: 1 << 3)
        /// The user must act (a password, say) before the connection can be made.
        public static let interventionRequired = ReachabilityFlags(rawValue: 1 << 4)
        /// A connection is established on demand by the system's network APIs.
        public static let connectionOnDemand = ReachabilityFlags(rawValue: 1 << 5)
        /// The target is an address of this machine.
        public static let isLocalAddress = ReachabilityFlags(rawValue: 1 << 16)
        /// The target is reached directly, not through a gateway.
        public static let isDirect = ReachabilityFlags(rawValue: 1 << 17)
        /// The path leaves by a cellular (WWAN) interface.
        public static let isWWAN = ReachabilityFlags(rawValue: 1 << 18)

        /// Every flag with its name, in raw-value order: the names the CLI's `--json` prints.
        public static let named: [(flag: ReachabilityFlags, name: String)] = [
            (.transientConnection, "transientConnection"),
            (.reachable, "reachable"),
            (.connectionRequired, "connectionRequired"),
            (.connectionOnTraffic, "connectionOnTraffic"),
            (.interventionRequired, "interventionRequired"),
            (.connectionOnDemand, "connectionOnDemand"),
            (.isLocalAddress, "isLocalAddress"),
            (.isDirect, "isDirect"),
            (.isWWAN, "isWWAN"),
        ]

        /// The names of the flags set, in raw-value order (``named``); bits without a name are
        /// left out.
        public var names: [String] {
            Self.named.filter { contains($0.flag) }.map(\.name)
        }

        /// The names of the flags set, comma-separated, in brackets: `[reachable, isDirect]`.
        public var description: String { "[" + names.joined(separator: ", ") + "]" }
    }
}
