/// What one evaluation found: the flags and the interface the path leaves by.
struct ReachabilitySnapshot: Equatable, Sendable {
    var flags: NetworkReachabilityManager.ReachabilityFlags
    /// nil when not reachable.
    var interfaceName: String?

    var status: NetworkReachabilityManager.Status { .init(flags: flags) }

    static let notReachable = ReachabilitySnapshot(flags: [], interfaceName: nil)
}

/// The rule from the kernel's answers to flags: pure, so it is tested with plain values.
enum RouteReachability {
    /// The snapshot for a target whose route lookup gave `route` (nil: no route, the kernel
    /// answered with an error) leaving by `link` (nil: the link could not be read).
    ///
    /// Reachable needs a unicast or local route whose output link is administratively up with
    /// its lower layer up (`IFF_UP`, `IFF_LOWER_UP`) and an operational state of up or unknown
    /// (loopback and some tunnels report unknown): a route that stays in the table while its
    /// link lost carrier (the kernel's `linkdown`) is not reachable.
    static func snapshot(route: RouteAnswer?, link: LinkInfo?) -> ReachabilitySnapshot {
        guard let route, let link, route.outputInterface == link.index, isUsable(link) else { return .notReachable }
        var flags: NetworkReachabilityManager.ReachabilityFlags
        switch route.type {
        case RouteNetlink.routeTypeLocal:
            flags = [.reachable, .isLocalAddress, .isDirect]
        case RouteNetlink.routeTypeUnicast:
            flags = route.hasGateway ? [.reachable] : [.reachable, .isDirect]
        default:
            // unreachable, blackhole, prohibit, throw, broadcast, multicast, ...
            return .notReachable
        }
        if isCellular(link) { flags.insert(.isWWAN) }
        if link.hardwareType == RouteNetlink.hardwarePPP { flags.insert(.transientConnection) }
        return ReachabilitySnapshot(flags: flags, interfaceName: link.name)
    }

    /// The default routes among a dump's `routes`, best first: unicast routes to 0/0 outside
    /// the local table, by metric.
    static func defaultRoutes(in routes: [RouteAnswer]) -> [RouteAnswer] {
        routes.filter {
            $0.destinationLength == 0 && $0.type == RouteNetlink.routeTypeUnicast && $0.table != RouteNetlink.routeTableLocal
        }
        .sorted { $0.priority < $1.priority }
    }

    /// Up, lower layer up, and operationally up (or unknown, as loopback reports).
    static func isUsable(_ link: LinkInfo) -> Bool {
        let up = link.flags & RouteNetlink.interfaceUp != 0
        let lowerUp = link.flags & RouteNetlink.interfaceLowerUp != 0
        let operational = link.operState.map { $0 == RouteNetlink.operStateUp || $0 == RouteNetlink.operStateUnknown } ?? true
        return up && lowerUp && operational
    }

    /// A cellular modem's interface: PPP or raw-IP hardware, the `wwan` link kind, or a
    /// `wwan*` name (ModemManager's and the kernel WWAN framework's naming).
    static func isCellular(_ link: LinkInfo) -> Bool {
        link.hardwareType == RouteNetlink.hardwarePPP || link.hardwareType == RouteNetlink.hardwareRawIP
            || link.kind == "wwan" || (link.name?.hasPrefix("wwan") ?? false)
    }
}
