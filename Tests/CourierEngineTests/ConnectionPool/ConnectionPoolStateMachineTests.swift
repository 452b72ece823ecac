import Testing

@testable import CourierEngine

@Suite("ConnectionPoolStateMachine")
struct ConnectionPoolStateMachineTests {
    typealias Machine = ConnectionPoolStateMachine
    let key = ConnectionKey(scheme: .http, host: "127.0.0.1", port: 8080)
    let other = ConnectionKey(scheme: .https, host: "127.0.0.1", port: 8080)

    private func waiter(_ n: Int) -> Machine.WaiterID { .init(raw: n) }

    @Test func firstRequestOpensConnectionAndGetsIt() {
        var machine = Machine(maximumConnectionsPerHost: 2, maximumIdleConnectionsPerHost: 2)
        #expect(machine.requestConnection(for: key, waiter: waiter(1)) == .createConnection(key))
        let id = machine.makeConnectionID()
        #expect(machine.connectionEstablished(id, key: key) == .lease(id, to: waiter(1)))
        #expect(machine.releaseConnection(id, reusable: true) == .park(id))
        // The idle connection is reused, no new one opened.
        #expect(machine.requestConnection(for: key, waiter: waiter(2)) == .lease(id))
    }

    @Test func perHostLimitQueuesInFIFOOrder() {
        var machine = Machine(maximumConnectionsPerHost: 1, maximumIdleConnectionsPerHost: 1)
        #expect(machine.requestConnection(for: key, waiter: waiter(1)) == .createConnection(key))
        #expect(machine.requestConnection(for: key, waiter: waiter(2)) == .enqueued)
        #expect(machine.requestConnection(for: key, waiter: waiter(3)) == .enqueued)
        let id = machine.makeConnectionID()
        #expect(machine.connectionEstablished(id, key: key) == .lease(id, to: waiter(1)))
        #expect(machine.releaseConnection(id, reusable: true) == .lease(id, to: waiter(2)))
        #expect(machine.releaseConnection(id, reusable: true) == .lease(id, to: waiter(3)))
        #expect(machine.releaseConnection(id, reusable: true) == .park(id))
    }

    @Test func keysAreIndependent() {
        var machine = Machine(maximumConnectionsPerHost: 1, maximumIdleConnectionsPerHost: 1)
        #expect(machine.requestConnection(for: key, waiter: waiter(1)) == .createConnection(key))
        #expect(machine.requestConnection(for: other, waiter: waiter(2)) == .createConnection(other))
    }

    @Test func connectFailureFailsOldestWaiterAndRetriesForTheRest() {
        var machine = Machine(maximumConnectionsPerHost: 1, maximumIdleConnectionsPerHost: 1)
        _ = machine.requestConnection(for: key, waiter: waiter(1))
        _ = machine.requestConnection(for: key, waiter: waiter(2))
        #expect(machine.connectionFailed(key: key) == .failWaiter(waiter(1), retryKey: key))
        #expect(machine.connectionFailed(key: key) == .failWaiter(waiter(2), retryKey: nil))
        #expect(machine.hosts[key] == nil)
    }

    @Test func unreusableReleaseClosesAndReplacementServesQueue() {
        var machine = Machine(maximumConnectionsPerHost: 1, maximumIdleConnectionsPerHost: 1)
        _ = machine.requestConnection(for: key, waiter: waiter(1))
        let id = machine.makeConnectionID()
        _ = machine.connectionEstablished(id, key: key)
        #expect(machine.requestConnection(for: key, waiter: waiter(2)) == .enqueued)
        #expect(machine.releaseConnection(id, reusable: false) == .close(id))
        // When the channel is gone, a replacement is opened for the waiter.
        #expect(machine.connectionClosed(id) == key)
        let replacement = machine.makeConnectionID()
        #expect(machine.connectionEstablished(replacement, key: key) == .lease(replacement, to: waiter(2)))
    }

    @Test func idleLimitClosesExtraConnections() {
        var machine = Machine(maximumConnectionsPerHost: 3, maximumIdleConnectionsPerHost: 1)
        var ids: [Machine.ConnectionID] = []
        for n in 1...2 {
            _ = machine.requestConnection(for: key, waiter: waiter(n))
            let id = machine.makeConnectionID()
            _ = machine.connectionEstablished(id, key: key)
            ids.append(id)
        }
        #expect(machine.releaseConnection(ids[0], reusable: true) == .park(ids[0]))
        #expect(machine.releaseConnection(ids[1], reusable: true) == .close(ids[1]))
    }

    @Test func idleConnectionClosedByServerIsForgotten() {
        var machine = Machine(maximumConnectionsPerHost: 2, maximumIdleConnectionsPerHost: 2)
        _ = machine.requestConnection(for: key, waiter: waiter(1))
        let id = machine.makeConnectionID()
        _ = machine.connectionEstablished(id, key: key)
        _ = machine.releaseConnection(id, reusable: true)
        #expect(machine.connectionClosed(id) == nil)
        #expect(machine.requestConnection(for: key, waiter: waiter(2)) == .createConnection(key))
    }

    @Test func idleTimeoutClosesOnlyIdleConnections() {
        var machine = Machine(maximumConnectionsPerHost: 2, maximumIdleConnectionsPerHost: 2)
        _ = machine.requestConnection(for: key, waiter: waiter(1))
        let id = machine.makeConnectionID()
        _ = machine.connectionEstablished(id, key: key)
        #expect(machine.idleTimeoutFired(id) == .none)  // leased
        _ = machine.releaseConnection(id, reusable: true)
        #expect(machine.idleTimeoutFired(id) == .close(id))
    }

    @Test func cancelledWaiterLeavesQueue() {
        var machine = Machine(maximumConnectionsPerHost: 1, maximumIdleConnectionsPerHost: 1)
        _ = machine.requestConnection(for: key, waiter: waiter(1))
        _ = machine.requestConnection(for: key, waiter: waiter(2))
        _ = machine.requestConnection(for: key, waiter: waiter(3))
        let first = machine.cancelWaiter(waiter(2), key: key)
        let second = machine.cancelWaiter(waiter(2), key: key)
        #expect(first)
        #expect(!second)
        let id = machine.makeConnectionID()
        #expect(machine.connectionEstablished(id, key: key) == .lease(id, to: waiter(1)))
        #expect(machine.releaseConnection(id, reusable: true) == .lease(id, to: waiter(3)))
    }

    @Test func shutdownClosesEverythingAndFailsWaiters() {
        var machine = Machine(maximumConnectionsPerHost: 1, maximumIdleConnectionsPerHost: 1)
        _ = machine.requestConnection(for: key, waiter: waiter(1))
        let id = machine.makeConnectionID()
        _ = machine.connectionEstablished(id, key: key)
        _ = machine.requestConnection(for: key, waiter: waiter(2))
        let action = machine.shutdown()
        #expect(action.close == [id])
        #expect(action.fail == [waiter(2)])
        #expect(machine.requestConnection(for: key, waiter: waiter(3)) == .failShutDown)
        #expect(machine.releaseConnection(id, reusable: true) == .close(id))
    }
}

/// The state machine keeps a key's state only while the key has a connection (open or
/// opening) or a waiter, on every path that ends one, and answers calls about connections and
/// keys it doesn't know without inventing state. Shutdown covers every key, not just one (it
/// changes each key's state in place while walking them).
@Suite("ConnectionPoolStateMachine host lifecycle")
struct ConnectionPoolHostLifecycleTests {
    typealias Machine = ConnectionPoolStateMachine
    let key = ConnectionKey(scheme: .http, host: "127.0.0.1", port: 8080)
    let h2Key = ConnectionKey(scheme: .https, host: "example.com", port: 443)

    private func waiter(_ n: Int) -> Machine.WaiterID { .init(raw: n) }
    private func machine() -> Machine { Machine(maximumConnectionsPerHost: 2, maximumIdleConnectionsPerHost: 1) }

    @Test func anHTTP1KeyIsForgottenOnceItsLastConnectionCloses() {
        var machine = machine()
        // Unreusable release, then the channel closes.
        _ = machine.requestConnection(for: key, waiter: waiter(1))
        let first = machine.makeConnectionID()
        #expect(machine.connectionEstablished(first, key: key) == .lease(first, to: waiter(1)))
        #expect(machine.releaseConnection(first, reusable: false) == .close(first))
        #expect(machine.hosts[key] != nil, "forgotten before its channel closed")
        #expect(machine.connectionClosed(first) == nil)
        #expect(machine.hosts.isEmpty)
        // Parked, idle timer, then the channel closes.
        _ = machine.requestConnection(for: key, waiter: waiter(2))
        let second = machine.makeConnectionID()
        _ = machine.connectionEstablished(second, key: key)
        #expect(machine.releaseConnection(second, reusable: true) == .park(second))
        #expect(machine.idleTimeoutFired(second) == .close(second))
        #expect(machine.connectionClosed(second) == nil)
        #expect(machine.hosts.isEmpty)
        // Over the idle limit: closed on release, forgotten on close.
        _ = machine.requestConnection(for: key, waiter: waiter(3))
        _ = machine.requestConnection(for: key, waiter: waiter(4))
        let third = machine.makeConnectionID()
        let fourth = machine.makeConnectionID()
        _ = machine.connectionEstablished(third, key: key)
        _ = machine.connectionEstablished(fourth, key: key)
        #expect(machine.releaseConnection(third, reusable: true) == .park(third))
        #expect(machine.releaseConnection(fourth, reusable: true) == .close(fourth))
        #expect(machine.connectionClosed(fourth) == nil)
        #expect(machine.connectionClosed(third) == nil)
        #expect(machine.hosts.isEmpty)
    }

    @Test func aKeyWhoseWaitersLeftIsForgottenWhenItsConnectEnds() {
        var machine = machine()
        #expect(machine.requestConnection(for: key, waiter: waiter(1)) == .createConnection(key))
        let cancelled = machine.cancelWaiter(waiter(1), key: key)
        #expect(cancelled)
        #expect(machine.hosts[key] != nil, "forgotten while a connection was still opening")
        #expect(machine.connectionFailed(key: key) == .none)
        #expect(machine.hosts.isEmpty)
        // The same, probing for HTTP/2.
        #expect(machine.requestConnection(for: h2Key, waiter: waiter(2), mayUseHTTP2: true) == .createConnection(h2Key))
        let cancelledProbe = machine.cancelWaiter(waiter(2), key: h2Key)
        #expect(cancelledProbe)
        #expect(machine.connectionFailed(key: h2Key) == .none)
        #expect(machine.hosts.isEmpty)
        // A connection that comes up with nobody waiting is parked, then forgotten on close.
        _ = machine.requestConnection(for: key, waiter: waiter(3))
        _ = machine.cancelWaiter(waiter(3), key: key)
        let id = machine.makeConnectionID()
        #expect(machine.connectionEstablished(id, key: key) == .park(id))
        #expect(machine.connectionClosed(id) == nil)
        #expect(machine.hosts.isEmpty)
    }

    @Test func anHTTP2KeyIsForgottenOnceItsDrainedConnectionCloses() {
        var machine = machine()
        _ = machine.requestConnection(for: h2Key, waiter: waiter(1), mayUseHTTP2: true)
        let id = machine.makeConnectionID()
        #expect(machine.http2ConnectionEstablished(id, key: h2Key, maximumStreams: 4) == .leaseStreams(id, to: [waiter(1)]))
        #expect(machine.http2SettingsChanged(id, maximumStreams: 0) == .none)  // at least one stream
        #expect(machine.http2StreamReleased(id) == .park(id))
        let goAway1 = machine.http2GoAwayReceived(id)
        #expect(goAway1.0 == .close(id) && goAway1.createConnection == nil)
        #expect(machine.connectionClosed(id) == nil)
        #expect(machine.hosts.isEmpty)
        // Calls about the closed connection change nothing.
        #expect(machine.http2StreamReleased(id) == .none)
        #expect(machine.http2SettingsChanged(id, maximumStreams: 10) == .none)
        let goAway2 = machine.http2GoAwayReceived(id)
        #expect(goAway2.0 == .none && goAway2.createConnection == nil)
        #expect(machine.idleTimeoutFired(id) == .none)
        #expect(machine.hosts.isEmpty)
    }

    @Test func callsAboutUnknownConnectionsOrKeysCreateNothing() {
        var machine = machine()
        let stranger = machine.makeConnectionID()
        #expect(machine.releaseConnection(stranger, reusable: true) == .none)
        #expect(machine.connectionClosed(stranger) == nil)
        #expect(machine.idleTimeoutFired(stranger) == .none)
        #expect(machine.http2StreamReleased(stranger) == .none)
        #expect(machine.http2SettingsChanged(stranger, maximumStreams: 5) == .none)
        let goAway3 = machine.http2GoAwayReceived(stranger)
        #expect(goAway3.0 == .none && goAway3.createConnection == nil)
        let cancelledStranger = machine.cancelWaiter(waiter(1), key: key)
        #expect(!cancelledStranger)
        #expect(machine.connectionFailed(key: key) == .none)
        #expect(machine.additionalHTTP1Connections(for: key) == 0)
        #expect(machine.connectionEstablished(stranger, key: key) == .close(stranger))
        #expect(machine.http2ConnectionEstablished(stranger, key: h2Key, maximumStreams: 5) == .close(stranger))
        #expect(!machine.hasConnection(stranger))
        #expect(machine.hosts.isEmpty)
    }

    @Test func shutdownCoversEveryKeyAndForgetsThemAsTheirConnectionsEnd() {
        var machine = Machine(maximumConnectionsPerHost: 1, maximumIdleConnectionsPerHost: 1)
        let keys = (0..<6).map { ConnectionKey(scheme: .http, host: "host\($0).example", port: 80) }
        var leased: [Machine.ConnectionID] = []
        var queued: [Machine.WaiterID] = []
        for (n, key) in keys.enumerated() {
            _ = machine.requestConnection(for: key, waiter: waiter(100 + n))
            let id = machine.makeConnectionID()
            _ = machine.connectionEstablished(id, key: key)
            leased.append(id)
            #expect(machine.requestConnection(for: key, waiter: waiter(200 + n)) == .enqueued)
            queued.append(waiter(200 + n))
        }
        // An idle connection on one more key, an HTTP/2 one with a waiter, one still opening.
        let idleKey = ConnectionKey(scheme: .http, host: "idle.example", port: 80)
        _ = machine.requestConnection(for: idleKey, waiter: waiter(1))
        let idle = machine.makeConnectionID()
        _ = machine.connectionEstablished(idle, key: idleKey)
        #expect(machine.releaseConnection(idle, reusable: true) == .park(idle))
        _ = machine.requestConnection(for: h2Key, waiter: waiter(2), mayUseHTTP2: true)
        let h2 = machine.makeConnectionID()
        _ = machine.http2ConnectionEstablished(h2, key: h2Key, maximumStreams: 1)
        #expect(machine.requestConnection(for: h2Key, waiter: waiter(3), mayUseHTTP2: true) == .enqueued)
        let openingKey = ConnectionKey(scheme: .http, host: "opening.example", port: 80)
        #expect(machine.requestConnection(for: openingKey, waiter: waiter(4)) == .createConnection(openingKey))

        let action = machine.shutdown()
        #expect(Set(action.close) == Set(leased + [idle, h2]))
        #expect(action.close.count == leased.count + 2)
        #expect(Set(action.fail) == Set(queued + [waiter(3), waiter(4)]))
        #expect(action.fail.count == queued.count + 2)

        for id in leased {
            #expect(machine.releaseConnection(id, reusable: true) == .close(id))
            #expect(machine.connectionClosed(id) == nil)
        }
        #expect(machine.connectionClosed(idle) == nil)
        #expect(machine.http2StreamReleased(h2) == .close(h2))
        #expect(machine.connectionClosed(h2) == nil)
        let late = machine.makeConnectionID()
        #expect(machine.connectionEstablished(late, key: openingKey) == .close(late))
        #expect(machine.hosts.isEmpty)
    }
}
