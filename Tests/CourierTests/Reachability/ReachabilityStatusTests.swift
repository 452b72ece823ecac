@testable import Courier
import Foundation
import Testing

/// `Status(flags:)` against AFNetworking's `AFNetworkReachabilityStatusForFlags`, over every
/// combination of the nine flags.
@Suite struct ReachabilityStatusTests {
    typealias Flags = NetworkReachabilityManager.ReachabilityFlags
    typealias Status = NetworkReachabilityManager.Status

    /// AFN's rule, restated from AFNetworking.md §1.6 with the flags read one by one.
    private static func afnStatus(_ flags: Flags) -> Status {
        let isReachable = flags.contains(.reachable)
        let needsConnection = flags.contains(.connectionRequired)
        let canConnectAutomatically = flags.contains(.connectionOnDemand) || flags.contains(.connectionOnTraffic)
        let canConnectWithoutUserInteraction = canConnectAutomatically && !flags.contains(.interventionRequired)
        let isNetworkReachable = isReachable && (!needsConnection || canConnectWithoutUserInteraction)
        if !isNetworkReachable { return .notReachable }
        if flags.contains(.isWWAN) { return .reachableViaWWAN }
        return .reachableViaWiFi
    }

    @Test func everyFlagCombinationMapsAsAFNetworkingDoes() {
        let all = Flags.named.map(\.flag)
        #expect(all.count == 9)
        var counts: [Status: Int] = [:]
        for mask in 0..<(1 << all.count) {
            var flags: Flags = []
            for (bit, flag) in all.enumerated() where mask & (1 << bit) != 0 { flags.insert(flag) }
            let status = Status(flags: flags)
            #expect(status == Self.afnStatus(flags), "flags \(flags)")
            counts[status, default: 0] += 1
        }
        // 512 combinations; reachable needs .reachable and (no connection required, or on
        // demand/traffic without intervention): 256 × (1/2 + 1/2 × 3/4 × 1/2) = 176.
        #expect(counts[.unknown] == nil)
        #expect((counts[.reachableViaWiFi] ?? 0) + (counts[.reachableViaWWAN] ?? 0) == 176)
        #expect(counts[.reachableViaWiFi] == counts[.reachableViaWWAN])
        #expect(counts[.notReachable] == 512 - 176)
    }

    @Test func namedCasesOfTheRule() {
        #expect(Status(flags: []) == .notReachable)
        #expect(Status(flags: [.reachable]) == .reachableViaWiFi)
        #expect(Status(flags: [.reachable, .isWWAN]) == .reachableViaWWAN)
        #expect(Status(flags: [.isWWAN]) == .notReachable)
        #expect(Status(flags: [.reachable, .connectionRequired]) == .notReachable)
        #expect(Status(flags: [.reachable, .connectionRequired, .connectionOnTraffic]) == .reachableViaWiFi)
        #expect(Status(flags: [.reachable, .connectionRequired, .connectionOnDemand, .interventionRequired]) == .notReachable)
        #expect(Status(flags: [.reachable, .interventionRequired]) == .reachableViaWiFi)
    }

    @Test func rawValuesAndStringsAreAFNetworkings() {
        #expect(Status.unknown.rawValue == -1)
        #expect(Status.notReachable.rawValue == 0)
        #expect(Status.reachableViaWWAN.rawValue == 1)
        #expect(Status.reachableViaWiFi.rawValue == 2)
        #expect(Status.allCases.map(\.description) == ["Unknown", "Not Reachable", "Reachable via WWAN", "Reachable via WiFi"])
        #expect(Status.allCases.map(\.name) == ["unknown", "notReachable", "reachableViaWWAN", "reachableViaWiFi"])
        #expect(Notification.Name.reachabilityDidChange.rawValue == "com.alamofire.networking.reachability.change")
        #expect(NetworkReachabilityManager.statusUserInfoKey == "AFNetworkingReachabilityNotificationStatusItem")
    }

    @Test func flagsHaveSystemConfigurationsRawValues() {
        // kSCNetworkReachabilityFlags*: the Apple engine hands SC's bits over unchanged.
        #expect(Flags.transientConnection.rawValue == 1 << 0)
        #expect(Flags.reachable.rawValue == 1 << 1)
        #expect(Flags.connectionRequired.rawValue == 1 << 2)
        #expect(Flags.connectionOnTraffic.rawValue == 1 << 3)
        #expect(Flags.interventionRequired.rawValue == 1 << 4)
        #expect(Flags.connectionOnDemand.rawValue == 1 << 5)
        #expect(Flags.isLocalAddress.rawValue == 1 << 16)
        #expect(Flags.isDirect.rawValue == 1 << 17)
        #expect(Flags.isWWAN.rawValue == 1 << 18)
        #expect(Flags([.reachable, .isDirect]).names == ["reachable", "isDirect"])
        #expect(Flags([.isWWAN, .reachable]).description == "[reachable, isWWAN]")
    }

    @Test func aNewManagerIsUnknownUntilItMonitors() throws {
        let manager = try NetworkReachabilityManager(address: "127.0.0.1")
        #expect(manager.status == .unknown)
        #expect(manager.flags == nil)
        #expect(manager.interfaceName == nil)
        #expect(!manager.isReachable && !manager.isReachableViaWiFi && !manager.isReachableViaWWAN)
    }

    @Test func addressesAndDomainsAreValidated() throws {
        #expect(throws: CourierError.self) { try NetworkReachabilityManager(address: "example.com") }
        #expect(throws: CourierError.self) { try NetworkReachabilityManager(address: "") }
        #expect(throws: CourierError.self) { try NetworkReachabilityManager(address: "fe80::1%eth0") }
        #expect(throws: CourierError.self) { try NetworkReachabilityManager(address: "256.1.1.1") }
        do {
            _ = try NetworkReachabilityManager(address: "not an address")
        } catch let error as CourierError {
            guard case .invalidReachabilityAddress("not an address") = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(error.description.contains("\"not an address\""))
        }
        for literal in ["10.0.0.1", "::1", "[::1]", "2001:db8::1", "0.0.0.0"] {
            #expect(throws: Never.self) { try NetworkReachabilityManager(address: literal) }
        }
        #expect(NetworkReachabilityManager(domain: "") == nil)
        #expect(NetworkReachabilityManager(domain: "bad host") == nil)
        #expect(NetworkReachabilityManager(domain: "a..b") == nil)
        #expect(NetworkReachabilityManager(domain: "-a.example") == nil)
        #expect(NetworkReachabilityManager(domain: String(repeating: "a", count: 64) + ".example") == nil)
        #expect(NetworkReachabilityManager(domain: String(repeating: "a.", count: 127) + "ab") == nil)
        for name in ["localhost", "example.com", "example.com.", "a_b.example", "127.0.0.1", "::1", "xn--bcher-kva.example"] {
            #expect(NetworkReachabilityManager(domain: name) != nil, "\(name)")
        }
    }
}
