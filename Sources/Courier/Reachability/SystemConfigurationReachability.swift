#if canImport(SystemConfiguration)
import Dispatch
import Foundation
import SystemConfiguration
import Synchronization

/// The Apple engine: an `SCNetworkReachability` for the target, scheduled on a private serial
/// queue, its flags handed over as they are (``NetworkReachabilityManager/ReachabilityFlags``
/// has `SCNetworkReachabilityFlags`'s raw values). As AFNetworking does, the current flags are
/// also read once at the start, off the caller's thread.
///
/// `@unchecked Sendable`: `reachability` is only scheduled and unscheduled (SC's calls are
/// thread-safe); everything else is immutable or in a Mutex.
final class SystemConfigurationReachability: ReachabilityObservation, @unchecked Sendable {
    private let reachability: SCNetworkReachability?
    private let queue: DispatchQueue
    private static let queueKey = DispatchSpecificKey<Bool>()
    private let report: @Sendable (ReachabilitySnapshot) -> Void
    private let isCancelled = Mutex(false)

    init(target: ReachabilityTarget, report: @escaping @Sendable (ReachabilitySnapshot) -> Void) {
        self.report = report
        queue = DispatchQueue(label: "courier.reachability.systemconfiguration")
        queue.setSpecific(key: Self.queueKey, value: true)
        reachability = Self.makeReachability(for: target)
        guard let reachability else {
            report(.notReachable)
            return
        }
        var context = SCNetworkReachabilityContext(
            version: 0, info: Unmanaged.passUnretained(self).toOpaque(), retain: nil, release: nil,
            copyDescription: nil)
        SCNetworkReachabilitySetCallback(
            reachability,
            { _, flags, info in
                guard let info else { return }
                let observation = Unmanaged<SystemConfigurationReachability>.fromOpaque(info).takeUnretainedValue()
                observation.deliver(flags)
            }, &context)
        SCNetworkReachabilitySetDispatchQueue(reachability, queue)
        queue.async { [self] in
            guard let reachability = self.reachability else { return }
            var flags = SCNetworkReachabilityFlags()
            if SCNetworkReachabilityGetFlags(reachability, &flags) { deliver(flags) }
        }
    }

    /// Unschedules the reachability; the callback's context holds `self` unretained, so this
    /// runs before `self` goes away (the manager cancels in `stopMonitoring` and `deinit`).
    func cancel() {
        let first = isCancelled.withLock { cancelled -> Bool in
            defer { cancelled = true }
            return !cancelled
        }
        guard first, let reachability else { return }
        SCNetworkReachabilitySetCallback(reachability, nil, nil)
        SCNetworkReachabilitySetDispatchQueue(reachability, nil)
        // A callback already running finishes before cancel returns (unless this is that
        // callback: the manager released from its own delivery).
        if DispatchQueue.getSpecific(key: Self.queueKey) == nil { queue.sync {} }
    }

    deinit { cancel() }

    private func deliver(_ flags: SCNetworkReachabilityFlags) {
        guard !isCancelled.withLock({ $0 }) else { return }
        let converted = NetworkReachabilityManager.ReachabilityFlags(rawValue: flags.rawValue)
        report(ReachabilitySnapshot(flags: converted, interfaceName: nil))
    }

    private static func makeReachability(for target: ReachabilityTarget) -> SCNetworkReachability? {
        switch target {
        case .domain(let name):
            return SCNetworkReachabilityCreateWithName(nil, name)
        case .defaultRoute:
            // AFN's +manager: the zero IPv6 address.
            var address = sockaddr_in6()
            address.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
            address.sin6_family = sa_family_t(AF_INET6)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SCNetworkReachabilityCreateWithAddress(nil, $0) }
            }
        case .address(let target) where target.family == .ipv4:
            var address = sockaddr_in()
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
            address.sin_family = sa_family_t(AF_INET)
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: target.bytes) }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SCNetworkReachabilityCreateWithAddress(nil, $0) }
            }
        case .address(let target):
            var address = sockaddr_in6()
            address.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
            address.sin6_family = sa_family_t(AF_INET6)
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: target.bytes) }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SCNetworkReachabilityCreateWithAddress(nil, $0) }
            }
        }
    }
}
#endif
