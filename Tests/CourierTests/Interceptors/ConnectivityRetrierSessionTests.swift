#if os(Linux)  // network namespaces, rtnetlink and ip(8) are Linux's
@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

// Nested in the serialized reachability suite: those tests count the process's monitor
// threads and netlink sockets, which this suite's reachability managers would add to.
extension ReachabilityNamespaceTests {
/// `ConnectivityRetrier` through a real session: the reachability manager watches a network
/// namespace the test made (so the test takes routes away and brings them back), the requests go
/// to the test server or to a refused loopback port. End to end, with the client's own sockets in
/// a namespace whose route comes back, is `WaitForNetworkCLITests`.
@Suite(.serialized) struct ConnectivityRetrierSessionTests {
    /// A loopback port nothing listens on: connecting is refused (a connect failure).
    static let refusedURL = URL(string: "http://127.0.0.1:1/get")

    /// Counts the retrier's waits, and what its decisions were.
    final class WaitLog: Sendable {
        private let state = Mutex<(waits: Int, decisions: [String])>((0, []))
        var waits: Int { state.withLock { $0.waits } }
        var decisions: [String] { state.withLock { $0.decisions } }
        func waited() { state.withLock { $0.waits += 1 } }
        func decided(_ decision: RetryDecision) {
            let name: String
            switch decision {
            case .retry: name = "retry"
            case .retryWithDelay: name = "retryWithDelay"
            case .doNotRetry: name = "doNotRetry"
            case .doNotRetryWithError: name = "doNotRetryWithError"
            }
            state.withLock { $0.decisions.append(name) }
        }

        /// Waits (hang bound 20 s) until `count` decisions were returned.
        func waitForDecisions(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let end = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < end {
                if decisions.count >= count { return }
                try await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("expected \(count) retry decisions within 20 s; got \(decisions)", sourceLocation: sourceLocation)
        }
    }

    /// The retrier, recording each decision it returns.
    struct Recording: RequestInterceptor {
        let retrier: ConnectivityRetrier
        let log: WaitLog
        func retry(_ task: SessionTask, dueTo error: any Error, response: HTTPURLResponse?) async -> RetryDecision {
            let decision = await retrier.retry(task, dueTo: error, response: response)
            log.decided(decision)
            return decision
        }
    }

    /// Runs `request` with `interceptor` on a new manager; the task, its completion, and the
    /// number of exchanges (one `didFinishCollecting` per exchange).
    func run(_ request: URLRequest, interceptor: any RequestInterceptor) async -> (task: SessionTask, call: CompletionRecorder.Call?, exchanges: Int) {
        let manager = URLSessionManager()
        let monitor = RetryRecorder()
        manager.addEventMonitor(monitor)
        let completion = CompletionRecorder()
        let task = manager.dataTask(with: request, interceptor: interceptor, completionHandler: completion.handler)
        task.resume()
        await completion.wait()
        return (task, completion.first, monitor.metricsCount)
    }

    /// A veth pair in `namespace`, v0 up with 10.200.0.1/24, and a default route through it.
    static func bringRouteUp(in namespace: TestNetworkNamespace) {
        namespace.ip("link", "add", "v0", "type", "veth", "peer", "name", "v1")
        namespace.ip("addr", "add", "10.200.0.1/24", "dev", "v0")
        namespace.ip("link", "set", "v1", "up")
        namespace.ip("link", "set", "v0", "up")
        namespace.ip("route", "add", "default", "dev", "v0")
    }

    @Test("no route: waits until one comes, then retries once")
    func waitsForTheRouteThenRetriesOnce() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        let reachability = NetworkReachabilityManager(target: .defaultRoute, networkNamespace: namespace.path)
        defer { reachability.stopMonitoring() }
        let log = WaitLog()
        // The route comes back while the task waits (the namespace starts with none).
        let retrier = ConnectivityRetrier(maximumWait: 600, reachabilityManager: reachability) { _ in
            log.waited()
            Self.bringRouteUp(in: namespace)
        }
        let url = try #require(Self.refusedURL)
        let (task, call, exchanges) = await run(URLRequest(url: url), interceptor: Recording(retrier: retrier, log: log))
        #expect(log.waits == 1)
        // The retry was refused as well: the second failure is not waited on (one retry at most).
        #expect(log.decisions == ["retry", "doNotRetry"])
        #expect(task.retryCount == 1)
        #expect(exchanges == 2)
        guard case .cannotConnect = call?.error as? CourierError else {
            Issue.record("expected cannotConnect, got \(String(describing: call?.error))")
            return
        }
    }

    @Test("reachable: the failure is not the network's, so no wait and no retry")
    func reachableIsNotWaitedOn() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        Self.bringRouteUp(in: namespace)
        let reachability = NetworkReachabilityManager(target: .defaultRoute, networkNamespace: namespace.path)
        defer { reachability.stopMonitoring() }
        let log = WaitLog()
        let retrier = ConnectivityRetrier(maximumWait: 600, reachabilityManager: reachability) { _ in log.waited() }
        let url = try #require(Self.refusedURL)
        let (task, _, exchanges) = await run(URLRequest(url: url), interceptor: Recording(retrier: retrier, log: log))
        #expect(log.waits == 0)
        #expect(log.decisions == ["doNotRetry"])
        #expect(reachability.isReachable)
        #expect(task.retryCount == 0)
        #expect(exchanges == 1)
    }

    @Test("a server error (503) is never waited on, even with no route")
    func serverErrorIsNotWaitedOn() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        let reachability = NetworkReachabilityManager(target: .defaultRoute, networkNamespace: namespace.path)
        defer { reachability.stopMonitoring() }
        let log = WaitLog()
        let retrier = ConnectivityRetrier(maximumWait: 600, reachabilityManager: reachability) { _ in log.waited() }
        try await TestServer.withRunning { server in
            let (task, call, exchanges) = await run(
                URLRequest(url: server.sessionURL("/status/503")), interceptor: Recording(retrier: retrier, log: log))
            #expect(call?.response?.statusCode == 503)
            #expect(log.waits == 0)
            #expect(log.decisions == ["doNotRetry"])
            #expect(task.retryCount == 0)
            #expect(exchanges == 1)
        }
    }

    @Test("a POST is not retried by default; with POST in retryableMethods it waits")
    func postIsNotRetriedByDefault() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        let reachability = NetworkReachabilityManager(target: .defaultRoute, networkNamespace: namespace.path)
        defer { reachability.stopMonitoring() }
        let url = try #require(Self.refusedURL)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data("a=1".utf8)

        let log = WaitLog()
        let retrier = ConnectivityRetrier(maximumWait: 600, reachabilityManager: reachability) { _ in log.waited() }
        let (task, _, exchanges) = await run(request, interceptor: Recording(retrier: retrier, log: log))
        #expect(log.waits == 0)
        #expect(log.decisions == ["doNotRetry"])
        #expect(task.retryCount == 0)
        #expect(exchanges == 1)

        // Allowed: it waits, and is sent again when the route comes.
        let postLog = WaitLog()
        let posting = ConnectivityRetrier(maximumWait: 600, retryableMethods: ["POST"], reachabilityManager: reachability) { _ in
            postLog.waited()
            Self.bringRouteUp(in: namespace)
        }
        let (postTask, _, postExchanges) = await run(request, interceptor: Recording(retrier: posting, log: postLog))
        #expect(postLog.waits == 1)
        #expect(postLog.decisions == ["retry", "doNotRetry"])
        #expect(postTask.retryCount == 1)
        #expect(postExchanges == 2)
    }

    @Test("cancelling the task ends the wait at once")
    func cancellingEndsTheWait() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        let reachability = NetworkReachabilityManager(target: .defaultRoute, networkNamespace: namespace.path)
        defer { reachability.stopMonitoring() }
        let log = WaitLog()
        // An hour's wait: only the cancellation can end it within the test's hang bound.
        let retrier = ConnectivityRetrier(maximumWait: 3600, reachabilityManager: reachability) { task in
            log.waited()
            task.cancel()
        }
        let url = try #require(Self.refusedURL)
        let (task, call, exchanges) = await run(URLRequest(url: url), interceptor: Recording(retrier: retrier, log: log))
        guard case .cancelled = call?.error as? CourierError else {
            Issue.record("expected cancelled, got \(String(describing: call?.error))")
            return
        }
        try await log.waitForDecisions(1)
        #expect(log.waits == 1)
        #expect(log.decisions == ["doNotRetry"])
        #expect(task.retryCount == 0)
        #expect(exchanges == 1)
    }

    @Test("in an Interceptor before RetryPolicy: server errors go on to the policy")
    func composesWithRetryPolicy() async throws {
        let namespace = try TestNetworkNamespace.make()
        defer { namespace.remove() }
        let reachability = NetworkReachabilityManager(target: .defaultRoute, networkNamespace: namespace.path)
        defer { reachability.stopMonitoring() }
        let log = WaitLog()
        let interceptor = Interceptor([
            Recording(retrier: ConnectivityRetrier(maximumWait: 600, reachabilityManager: reachability) { _ in log.waited() }, log: log),
            RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01),
        ])
        try await TestServer.withRunning { server in
            let key = UUID().uuidString
            let (task, call, exchanges) = await run(URLRequest(url: server.sessionURL("/retry/\(key)?fail=2")), interceptor: interceptor)
            #expect(call?.response?.statusCode == 200)
            #expect(task.retryCount == 2)
            #expect(exchanges == 3)
            #expect(log.waits == 0)
            #expect(log.decisions == ["doNotRetry", "doNotRetry"])
        }
    }
}
}
#endif
