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
