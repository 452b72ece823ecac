import Courier
import Dispatch
import Foundation
import Testing

/// The example of the "Reachability" article: loopback and the default route on this machine.
/// Part of the serialized `ReachabilityNamespaceTests` suite: those tests count the process's
/// monitor threads and netlink sockets, which this example's monitors would add to.
extension ReachabilityNamespaceTests {
    @Test("Documentation: a host's reachability and the default route's, three ways")
    func reachabilityDocumentationExample() async throws {
        #if os(Linux)
        guard let loopback = NetworkReachabilityManager(domain: "localhost") else { return }   // nil for a malformed name
        loopback.callbackQueue = DispatchQueue(label: "reachability")   // main by default on Apple platforms
        loopback.setReachabilityStatusChangeBlock { status in
            print("localhost:", status)                       // "localhost: Reachable via WiFi"
        }
        loopback.startMonitoring()
        defer { loopback.stopMonitoring() }

        let network = NetworkReachabilityManager.shared       // the default route
        network.startMonitoring()
        defer { network.stopMonitoring() }
        for await status in network.statusUpdates {           // the current status, then each change
            print("network:", status, network.interfaceName ?? "-")   // "network: Reachable via WiFi eth0"
            break                                             // a long-running program keeps listening
        }

        try await eventually(within: 20) { loopback.status != .unknown }
        #expect(loopback.status == .reachableViaWiFi)
        #expect(loopback.interfaceName == "lo")
        #expect(network.status != .unknown)
        #endif
    }
}
