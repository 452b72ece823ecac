#if os(Linux)  // network namespaces, rtnetlink and ip(8) are Linux's
@testable import Courier
import Dispatch
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// A network namespace of the test's own (`ip netns add`), changed with `ip -n NAME ...`.
/// These machines and CI run as root; where namespaces are not permitted, `make()` throws an
/// error saying so (the reachability tests must not pass by skipping).
struct TestNetworkNamespace {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    let name: String
    var path: String { "/run/netns/\(name)" }

    static func make() throws -> TestNetworkNamespace {
        let name = "courier-reach-\(UUID().uuidString.prefix(8).lowercased())"
        let result = run(["netns", "add", name])
        guard result.status == 0 else {
            throw Unavailable(
                description: "network namespaces are not permitted here (`ip netns add \(name)` exited \(result.status): "
                    + "\(result.output.trimmingCharacters(in: .whitespacesAndNewlines))). The reachability tests change "
                    + "real links in a namespace of their own: they need root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and "
                    + "iproute2 (scripts/install-dependencies.sh installs it).")
        }
        return TestNetworkNamespace(name: name)
    }

    /// `ip -n NAME arguments...`; records a failure when it fails.
    func ip(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        let result = Self.run(["-n", name] + arguments)
        #expect(result.status == 0, "ip \(arguments.joined(separator: " ")): \(result.output)", sourceLocation: sourceLocation)
    }

    /// `ip netns del NAME` (the namespace and its links go away).
    func remove() {
        _ = Self.run(["netns", "del", name])
    }

    /// Runs `ip`; returns its status and stderr+stdout.
    static func run(_ arguments: [String]) -> (status: Int32, output: String) {
        let candidates = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return (127, "no ip command (install iproute2)")
        }
        do {
            let result = try ProcessLauncher.runToEnd(path, arguments, includingStandardError: true)
            return (result.status, String(decoding: result.output, as: UTF8.self))
        } catch {
            return (127, "\(error)")
        }
    }
}

/// Everything one manager delivered, by each of the three ways.
final class ReachabilityRecorder: Sendable {
    typealias Status = NetworkReachabilityManager.Status

    struct Delivery: Equatable, CustomStringConvertible {
        var status: Status
        var interface: String?
        var flags: NetworkReachabilityManager.ReachabilityFlags?
        var description: String { "\(status.name)(\(interface ?? "-"), \(flags.map(\.description) ?? "nil"))" }
    }

    let manager: NetworkReachabilityManager
    private let blocks = Mutex<[Delivery]>([])
    private let notifications = Mutex<[Status]>([])
    private let streamed = Mutex<[Status]>([])
    /// Block calls and notifications in the order they happened.
    private let order = Mutex<[String]>([])
    /// @unchecked: the token is only handed back to NotificationCenter.
    private struct ObserverToken: @unchecked Sendable { let token: any NSObjectProtocol }
    private let observer: Mutex<ObserverToken?> = Mutex(nil)
    private let streamTask: Mutex<Task<Void, Never>?> = Mutex(nil)

    /// Records `manager`'s deliveries; all recorders of a test share `queue` (serial), so a
    /// delivery seen on one manager means every earlier one of the others has run too.
    init(_ manager: NetworkReachabilityManager, queue: DispatchQueue) {
        self.manager = manager
        manager.callbackQueue = queue
        manager.setReachabilityStatusChangeBlock { [weak self, weak manager] status in
            self?.blocks.withLock {
                $0.append(Delivery(status: status, interface: manager?.interfaceName, flags: manager?.flags))
            }
            self?.order.withLock { $0.append("block \(status.name)") }
        }
        let token = NotificationCenter.default.addObserver(
            forName: .reachabilityDidChange, object: manager, queue: nil
        ) { [weak self, weak manager] notification in
            // A recorder or manager already gone: the observer outlived its test (a new manager
            // can reuse a freed one's address, which the object filter compares).
            guard let self, let manager else { return }
            guard (notification.object as? NetworkReachabilityManager) === manager,
                let status = notification.userInfo?[NetworkReachabilityManager.statusUserInfoKey] as? Status
            else {
                Issue.record("a reachability notification without its manager or status: \(notification)")
                return
            }
            self.notifications.withLock { $0.append(status) }
            self.order.withLock { $0.append("notification \(status.name)") }
        }
        let wrapped = ObserverToken(token: token)
        observer.withLock { $0 = wrapped }
        let updates = manager.statusUpdates
        let task = Task { [weak self] in
            for await status in updates { self?.streamed.withLock { $0.append(status) } }
        }
        streamTask.withLock { $0 = task }
    }

    var deliveries: [Delivery] { blocks.withLock { $0 } }
    var statuses: [Status] { deliveries.map(\.status) }
    var notified: [Status] { notifications.withLock { $0 } }
    var streamedStatuses: [Status] { streamed.withLock { $0 } }

    /// Waits (hang bound 20 s) until the block has run `count` times and the notification and
    /// the stream have caught up with it.
    func waitForDeliveries(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if deliveries.count >= count && notified.count >= count && streamedStatuses.count >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record(
            "expected \(count) deliveries within 20 s; block \(deliveries), notifications \(notified), stream \(streamedStatuses)",
            sourceLocation: sourceLocation)
    }

    /// Checks that each of the three ways delivered exactly `expected`, once each.
    func expectExactly(_ expected: [Status], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(statuses == expected, "block: \(deliveries)", sourceLocation: sourceLocation)
        #expect(notified == expected, "notifications", sourceLocation: sourceLocation)
        #expect(streamedStatuses == expected, "stream", sourceLocation: sourceLocation)
        // AFN's order: the block, then the notification, for each change.
        let happened = order.withLock { $0 }
        #expect(happened == expected.flatMap { ["block \($0.name)", "notification \($0.name)"] }, sourceLocation: sourceLocation)
    }

    deinit {
        if let wrapped = observer.withLock({ $0 }) { NotificationCenter.default.removeObserver(wrapped.token) }
    }

    func stop() {
        manager.stopMonitoring()
        if let wrapped = observer.withLock({ $0 }) { NotificationCenter.default.removeObserver(wrapped.token) }
        streamTask.withLock { $0?.cancel() }
    }
}

/// The netlink sockets this process has open now, by inode (`SO_DOMAIN` is `AF_NETLINK`); with
/// `groups`, only those bound to exactly these multicast groups (the monitor's event socket;
/// glibc's resolver opens short-lived netlink sockets of its own, bound to none).
func openNetlinkSockets(subscribedTo groups: UInt32? = nil) -> Set<UInt64> {
    var result: Set<UInt64> = []
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return result }
    for entry in entries {
        guard let fd = Int32(entry) else { continue }
        var domain: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0, domain == 16 else { continue }  // AF_NETLINK
        if let groups {
            // struct sockaddr_nl: family, pad, pid, groups (u32 at offset 8).
            var address = [UInt8](repeating: 0, count: 12)
            var size = socklen_t(12)
            let named = address.withUnsafeMutableBytes { raw in
                getsockname(fd, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), &size)
            }
            guard named == 0, address[8..<12].withUnsafeBytes({ $0.loadUnaligned(as: UInt32.self) }) == groups else { continue }
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else { continue }
        result.insert(UInt64(status.st_ino))
    }
    return result
}

/// The threads of this process named `name` (`/proc/self/task/*/comm`).
func threadsNamed(_ name: String) -> Int {
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return 0 }
    return tasks.filter { task in
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
    }.count
}
#endif
