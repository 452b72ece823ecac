#if os(Linux)  // network namespaces are Linux's
@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

// Nested in the serialized reachability suite: those tests count the process's monitor
// threads and netlink sockets, which this suite's reachability managers would add to.
extension ReachabilityNamespaceTests {
/// `EventSourceConfiguration.waitsForConnectivity`: a connection refused while reachability (a
/// real `NetworkReachabilityManager` watching a network namespace of the test's own) says the
/// host is not reachable waits for it to become reachable, then reconnects at once.
@Suite("event source waiting for connectivity")
struct EventSourceConnectivityTests {
    @Test("offline, it waits for reachability instead of backing off (an hour here), and reconnects when the link comes up",
          .timeLimit(.minutes(1)))
    func waitsForConnectivity() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        // A port with nothing listening yet: the first connection is refused.
        let probe = try await TestServer.start()
        let port = probe.port
        try await probe.shutdown()
        // 127.0.0.1 in a fresh namespace, whose loopback is down: not reachable.
        let reachability = NetworkReachabilityManager(
            target: .address(try #require(ReachabilityAddress(literal: "127.0.0.1"))), networkNamespace: namespace.path)
        reachability.startMonitoring()
        defer { reachability.stopMonitoring() }
        try await eventually { reachability.status != .unknown }
        #expect(reachability.status == .notReachable)

        let configuration = EventSourceConfiguration(
            initialReconnectionTime: .seconds(3600), waitsForConnectivity: .seconds(3600), reachability: reachability)
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/sse/offline?count=2&retry=0"))
        let source = URLSessionManager().eventSource(for: URLRequest(url: url), configuration: configuration)
        let reader = Task { () -> [ServerSentEvent] in
            var events: [ServerSentEvent] = []
            for try await event in source { events.append(event) }
            return events
        }
        try await eventually { source.consecutiveFailures == 1 }
        #expect(source.reconnectionDelay == .seconds(3600))  // the bound of the wait, not a backoff
        // The network comes back: the server listens, and the namespace's loopback goes up.
        let server = try await TestServer.start(.init(port: port))
        namespace.ip("link", "set", "lo", "up")
        let events = try await reader.value
        #expect(events == [ServerSentEvent(data: "event 1", id: "1"), ServerSentEvent(data: "event 2", id: "2")])
        #expect(source.reconnections == 2)
        #expect(server.requestsReceived(forPath: "/sse/offline") == 2)
        try await server.shutdown()
    }
}
}
#endif
