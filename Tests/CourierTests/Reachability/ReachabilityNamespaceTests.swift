#if os(Linux)  // network namespaces, rtnetlink and ip(8) are Linux's
@testable import Courier
import Dispatch
import Foundation
import Synchronization
import Testing

/// NetworkReachabilityManager against the real kernel: each test makes a network namespace,
/// points managers at it (the monitor's thread joins the namespace before opening its netlink
/// sockets; the rest of the process stays put) and drives real link, address and route
/// changes with `ip`. Every change must reach the block, the notification and the stream
/// exactly once. Serialized: the leak checks count the process's netlink sockets and threads.
@Suite(.serialized) struct ReachabilityNamespaceTests {
    typealias Status = NetworkReachabilityManager.Status

    @Test func linkAddressAndRouteChangesAreDeliveredOnceEach() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        let queue = DispatchQueue(label: "reachability-test-deliveries")
        let defaultRoute = ReachabilityRecorder(
            NetworkReachabilityManager(target: .defaultRoute, networkNamespace: namespace.path), queue: queue)
        let onLink = ReachabilityRecorder(
            NetworkReachabilityManager(
                target: .address(try #require(ReachabilityAddress(literal: "10.200.0.2"))), networkNamespace: namespace.path),
            queue: queue)
        let localhost = ReachabilityRecorder(
            NetworkReachabilityManager(target: .domain("localhost"), networkNamespace: namespace.path), queue: queue)
        defer { [defaultRoute, onLink, localhost].forEach { $0.stop() } }
        let subscribed = openNetlinkSockets(subscribedTo: RouteNetlink.reachabilityGroups)
        for recorder in [defaultRoute, onLink, localhost] { recorder.manager.startMonitoring() }

        // A fresh namespace: only lo, down. Nothing is reachable.
        for recorder in [defaultRoute, onLink, localhost] { try await recorder.waitForDeliveries(1) }
        #expect(defaultRoute.deliveries == [.init(status: .notReachable, interface: nil, flags: [])])
        #expect(onLink.statuses == [.notReachable])
        #expect(localhost.statuses == [.notReachable])
        // One monitor (one thread, one subscribed event socket) serves all three.
        // (A monitor of another test of this serialized suite may still be winding down.)
        try await eventually(within: 20) { ReachabilityMonitor.threadCount.load(ordering: .relaxed) == 1 }
        #expect(openNetlinkSockets(subscribedTo: RouteNetlink.reachabilityGroups).subtracting(subscribed).count == 1)

        // Loopback up: localhost is reachable, by lo.
        namespace.ip("link", "set", "lo", "up")
        try await localhost.waitForDeliveries(2)
        #expect(
            localhost.deliveries.last == .init(status: .reachableViaWiFi, interface: "lo", flags: [.reachable, .isLocalAddress, .isDirect]))
        #expect(localhost.manager.isReachableViaWiFi && localhost.manager.isReachable)

        // A veth with an address, both ends up: the on-link address is reachable; no default route yet.
        namespace.ip("link", "add", "v0", "type", "veth", "peer", "name", "v1")
        namespace.ip("addr", "add", "10.200.0.1/24", "dev", "v0")
        namespace.ip("link", "set", "v1", "up")
        namespace.ip("link", "set", "v0", "up")
        try await onLink.waitForDeliveries(2)
        #expect(onLink.deliveries.last == .init(status: .reachableViaWiFi, interface: "v0", flags: [.reachable, .isDirect]))

        // A default route by the veth.
        namespace.ip("route", "add", "default", "dev", "v0")
        try await defaultRoute.waitForDeliveries(2)
        #expect(defaultRoute.deliveries.last == .init(status: .reachableViaWiFi, interface: "v0", flags: [.reachable, .isDirect]))
        #expect(defaultRoute.manager.interfaceName == "v0")

        // Default route removed: not reachable, while the on-link address stays reachable.
        namespace.ip("route", "del", "default")
        try await defaultRoute.waitForDeliveries(3)
        #expect(defaultRoute.deliveries.last == .init(status: .notReachable, interface: nil, flags: []))

        // A default route through a gateway: reachable, not direct.
        namespace.ip("route", "add", "default", "via", "10.200.0.2")
        try await defaultRoute.waitForDeliveries(4)
        #expect(defaultRoute.deliveries.last == .init(status: .reachableViaWiFi, interface: "v0", flags: [.reachable]))

        // The peer goes down: v0 loses carrier, its routes stay (linkdown); nothing is reachable by it.
        namespace.ip("link", "set", "v1", "down")
        try await defaultRoute.waitForDeliveries(5)
        try await onLink.waitForDeliveries(3)
        #expect(defaultRoute.statuses.last == .notReachable)
        #expect(onLink.statuses.last == .notReachable)
        namespace.ip("link", "set", "v1", "up")
        try await defaultRoute.waitForDeliveries(6)
        try await onLink.waitForDeliveries(4)
        #expect(defaultRoute.deliveries.last == .init(status: .reachableViaWiFi, interface: "v0", flags: [.reachable]))
        #expect(onLink.statuses.last == .reachableViaWiFi)

        // v0 itself down: both not reachable (the kernel drops its routes); back up: the
        // connected route returns (the on-link address is reachable), the default route does not.
        namespace.ip("link", "set", "v0", "down")
        try await defaultRoute.waitForDeliveries(7)
        try await onLink.waitForDeliveries(5)
        namespace.ip("link", "set", "v0", "up")
        try await onLink.waitForDeliveries(6)
        #expect(onLink.deliveries.last == .init(status: .reachableViaWiFi, interface: "v0", flags: [.reachable, .isDirect]))

        // A stopped manager receives nothing: stop the default-route manager, add a default
        // route, then make a change the on-link manager sees (same delivery queue: anything
        // for the stopped manager would have run before it).
        defaultRoute.manager.stopMonitoring()
        namespace.ip("route", "add", "default", "dev", "v0")
        namespace.ip("addr", "del", "10.200.0.1/24", "dev", "v0")
        try await onLink.waitForDeliveries(7)
        queue.sync {}

        defaultRoute.expectExactly([.notReachable, .reachableViaWiFi, .notReachable, .reachableViaWiFi, .notReachable, .reachableViaWiFi, .notReachable])
        onLink.expectExactly([.notReachable, .reachableViaWiFi, .notReachable, .reachableViaWiFi, .notReachable, .reachableViaWiFi, .notReachable])
        localhost.expectExactly([.notReachable, .reachableViaWiFi])
        #expect(defaultRoute.manager.status == .notReachable)  // the last delivered status stays readable
    }

    @Test func aRestartedManagerDeliversItsFirstStatusAgain() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        namespace.ip("link", "set", "lo", "up")
        let queue = DispatchQueue(label: "reachability-test-deliveries")
        let loopback = ReachabilityRecorder(
            NetworkReachabilityManager(target: .address(try #require(ReachabilityAddress(literal: "127.0.0.1"))), networkNamespace: namespace.path),
            queue: queue)
        defer { loopback.stop() }
        loopback.manager.startMonitoring()
        try await loopback.waitForDeliveries(1)
        #expect(loopback.deliveries == [.init(status: .reachableViaWiFi, interface: "lo", flags: [.reachable, .isLocalAddress, .isDirect])])
        loopback.manager.startMonitoring()  // stops first, then starts: unknown, then the first evaluation again
        try await loopback.waitForDeliveries(2)
        namespace.ip("link", "set", "lo", "down")
        try await loopback.waitForDeliveries(3)
        queue.sync {}
        loopback.expectExactly([.reachableViaWiFi, .reachableViaWiFi, .notReachable])
    }

    @Test func aManagerReleasedWhileMonitoringLeavesNoSocketOrThread() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        let before = openNetlinkSockets()
        let threadsBefore = threadsNamed("courier-reach")
        let monitorsBefore = ReachabilityMonitor.threadCount.load(ordering: .relaxed)
        var opened: Set<UInt64> = []
        do {
            let queue = DispatchQueue(label: "reachability-test-deliveries")
            let recorder = ReachabilityRecorder(
                NetworkReachabilityManager(target: .defaultRoute, networkNamespace: namespace.path), queue: queue)
            recorder.manager.startMonitoring()
            try await recorder.waitForDeliveries(1)
            opened = openNetlinkSockets().subtracting(before)
            #expect(opened.count >= 2)  // the event and request sockets (and maybe a resolver's, short-lived)
            #expect(openNetlinkSockets(subscribedTo: RouteNetlink.reachabilityGroups).intersection(opened).count == 1)
            #expect(threadsNamed("courier-reach") == threadsBefore + 1)
            queue.sync {}
            // The recorder (and with it the manager) goes away here, still monitoring.
        }
        try await eventually(within: 20) {
            openNetlinkSockets().isDisjoint(with: opened) && threadsNamed("courier-reach") == threadsBefore
                && ReachabilityMonitor.threadCount.load(ordering: .relaxed) == monitorsBefore
        }
    }

    @Test func aNamespaceThatCannotBeEnteredIsReported() async throws {
        let monitorsBefore = ReachabilityMonitor.threadCount.load(ordering: .relaxed)
        let manager = NetworkReachabilityManager(target: .defaultRoute, networkNamespace: "/run/netns/courier-reach-missing")
        ReachabilityMonitor.lastStartFailure.withLock { $0 = nil }
        manager.startMonitoring()
        try await eventually(within: 20) { ReachabilityMonitor.lastStartFailure.withLock { $0 } != nil }
        #expect(ReachabilityMonitor.lastStartFailure.withLock { $0 }?.contains("courier-reach-missing") == true)
        #expect(manager.status == .unknown)
        manager.stopMonitoring()
        try await eventually(within: 20) { ReachabilityMonitor.threadCount.load(ordering: .relaxed) == monitorsBefore }
    }

    /// The README's example, in this process's own namespace (its loopback is up): the block
    /// hears localhost is reachable by lo; the shared manager's stream gives a first status.
    @Test func readmeReachabilityExample() async throws {
        let heard = ReachabilityHeard()
        let loopback = try #require(NetworkReachabilityManager(domain: "localhost"))
        loopback.setReachabilityStatusChangeBlock { status in
            heard.append("localhost: \(status)")
        }
        loopback.startMonitoring()
        defer { loopback.stopMonitoring() }

        let network = NetworkReachabilityManager.shared
        network.startMonitoring()
        defer { network.stopMonitoring() }
        let first = try await withThrowingTaskGroup(of: NetworkReachabilityManager.Status?.self) { group in
            group.addTask {
                // The first status is enough: the machine may have no default route.
                for await status in network.statusUpdates { return status }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(20))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        #expect(first != nil && first != .unknown, "the shared manager's stream gave no status within 20 s")
        try await eventually(within: 20) { !heard.lines.isEmpty }
        #expect(heard.lines == ["localhost: Reachable via WiFi"])
        #expect(loopback.interfaceName == "lo")
    }
}

/// Lines a block appended.
final class ReachabilityHeard: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    func append(_ line: String) { storage.withLock { $0.append(line) } }
}
#endif
