import Testing

@testable import CourierEngine

/// The pool state machine's HTTP/2 side, with plain values.
@Suite("ConnectionPoolStateMachine HTTP/2")
struct ConnectionPoolHTTP2StateMachineTests {
    typealias Machine = ConnectionPoolStateMachine
    let key = ConnectionKey(scheme: .https, host: "example.com", port: 443)

    private func waiter(_ n: Int) -> Machine.WaiterID { .init(raw: n) }
    private func machine() -> Machine { Machine(maximumConnectionsPerHost: 6, maximumIdleConnectionsPerHost: 6) }

    @Test func aKeyThatMayUseH2OpensOneConnectionUntilItKnows() {
        var machine = machine()
        #expect(machine.requestConnection(for: key, waiter: waiter(1), mayUseHTTP2: true) == .createConnection(key))
        for n in 2...10 {
            #expect(machine.requestConnection(for: key, waiter: waiter(n), mayUseHTTP2: true) == .enqueued)
        }
        let id = machine.makeConnectionID()
        #expect(
            machine.http2ConnectionEstablished(id, key: key, maximumStreams: 100)
                == .leaseStreams(id, to: (1...10).map(waiter)))
        // Later requests get streams at once.
        #expect(machine.requestConnection(for: key, waiter: waiter(11), mayUseHTTP2: true) == .leaseStream(id))
    }

    @Test func streamsBeyondTheLimitWaitAndDrainInOrder() {
        var machine = machine()
        _ = machine.requestConnection(for: key, waiter: waiter(1), mayUseHTTP2: true)
        let id = machine.makeConnectionID()
        #expect(machine.http2ConnectionEstablished(id, key: key, maximumStreams: 2) == .leaseStreams(id, to: [waiter(1)]))
        #expect(machine.requestConnection(for: key, waiter: waiter(2), mayUseHTTP2: true) == .leaseStream(id))
        // Full: no new connection, the request waits for a stream.
        #expect(machine.requestConnection(for: key, waiter: waiter(3), mayUseHTTP2: true) == .enqueued)
        #expect(machine.requestConnection(for: key, waiter: waiter(4), mayUseHTTP2: true) == .enqueued)
        #expect(machine.http2StreamReleased(id) == .leaseStreams(id, to: [waiter(3)]))
        #expect(machine.http2StreamReleased(id) == .leaseStreams(id, to: [waiter(4)]))
        #expect(machine.http2StreamReleased(id) == .none)
        #expect(machine.http2StreamReleased(id) == .park(id))
        // Idle long enough: closed.
        #expect(machine.idleTimeoutFired(id) == .close(id))
    }

    @Test func aWebSocketTakesAFreeStreamOnlyFromAConnectionThatAcceptsIt() {
        var machine = machine()
        // Nothing open yet: the socket opens its own connection (nothing is queued for it).
        #expect(machine.leaseFreeStream(for: key) { _ in true } == nil)
        _ = machine.requestConnection(for: key, waiter: waiter(1), mayUseHTTP2: true)
        let id = machine.makeConnectionID()
        _ = machine.http2ConnectionEstablished(id, key: key, maximumStreams: 2)
        #expect(machine.leaseFreeStream(for: key) { _ in false } == nil, "a server without extended CONNECT")
        #expect(machine.leaseFreeStream(for: key) { $0 == id } == id)
        // Both streams busy (the request and the socket): the next socket gets none, and a
        // request waits as usual.
        #expect(machine.leaseFreeStream(for: key) { _ in true } == nil)
        #expect(machine.requestConnection(for: key, waiter: waiter(2), mayUseHTTP2: true) == .enqueued)
        // The socket closes: its stream goes to the waiting request; then both end and it parks.
        #expect(machine.http2StreamReleased(id) == .leaseStreams(id, to: [waiter(2)]))
        #expect(machine.http2StreamReleased(id) == .none)
        #expect(machine.http2StreamReleased(id) == .park(id))
        // A connection going away takes no socket.
        _ = machine.http2GoAwayReceived(id)
        #expect(machine.leaseFreeStream(for: key) { _ in true } == nil)
    }

    @Test func raisedStreamLimitLeasesMoreWaiters() {
        var machine = machine()
        _ = machine.requestConnection(for: key, waiter: waiter(1), mayUseHTTP2: true)
        _ = machine.requestConnection(for: key, waiter: waiter(2), mayUseHTTP2: true)
        _ = machine.requestConnection(for: key, waiter: waiter(3), mayUseHTTP2: true)
        let id = machine.makeConnectionID()
        #expect(machine.http2ConnectionEstablished(id, key: key, maximumStreams: 1) == .leaseStreams(id, to: [waiter(1)]))
        #expect(machine.http2SettingsChanged(id, maximumStreams: 10) == .leaseStreams(id, to: [waiter(2), waiter(3)]))
    }

    @Test func goAwayDrainsTheConnectionAndOpensAnotherForTheQueue() {
        var machine = machine()
        _ = machine.requestConnection(for: key, waiter: waiter(1), mayUseHTTP2: true)
        let first = machine.makeConnectionID()
        _ = machine.http2ConnectionEstablished(first, key: key, maximumStreams: 1)
        #expect(machine.requestConnection(for: key, waiter: waiter(2), mayUseHTTP2: true) == .enqueued)
        let (action, create) = machine.http2GoAwayReceived(first)
        #expect(action == .none)  // one stream still running
        #expect(create == key)
        // New requests don't go to the draining connection.
        #expect(machine.requestConnection(for: key, waiter: waiter(3), mayUseHTTP2: true) == .enqueued)
        #expect(machine.http2StreamReleased(first) == .close(first))
        let second = machine.makeConnectionID()
        #expect(machine.http2ConnectionEstablished(second, key: key, maximumStreams: 10) == .leaseStreams(second, to: [waiter(2), waiter(3)]))
        #expect(machine.connectionClosed(first) == nil)
    }

    @Test func aClosedH2ConnectionIsReplacedForQueuedRequests() {
        var machine = machine()
        _ = machine.requestConnection(for: key, waiter: waiter(1), mayUseHTTP2: true)
        let id = machine.makeConnectionID()
        _ = machine.http2ConnectionEstablished(id, key: key, maximumStreams: 1)
        #expect(machine.requestConnection(for: key, waiter: waiter(2), mayUseHTTP2: true) == .enqueued)
        #expect(machine.connectionClosed(id) == key)
    }

    @Test func aFailedFirstConnectFailsEveryoneWaitingForIt() {
        var machine = machine()
        _ = machine.requestConnection(for: key, waiter: waiter(1), mayUseHTTP2: true)
        _ = machine.requestConnection(for: key, waiter: waiter(2), mayUseHTTP2: true)
        #expect(machine.connectionFailed(key: key) == .failWaiters([waiter(1), waiter(2)]))
        #expect(machine.hosts[key] == nil)
    }

    @Test func anHTTP1AnswerOpensMoreConnectionsForTheQueue() {
        var machine = machine()
        for n in 1...4 {
            _ = machine.requestConnection(for: key, waiter: waiter(n), mayUseHTTP2: true)
        }
        let id = machine.makeConnectionID()
        #expect(machine.connectionEstablished(id, key: key) == .lease(id, to: waiter(1)))
        // Three still wait; the key now behaves like any HTTP/1.1 key.
        #expect(machine.additionalHTTP1Connections(for: key) == 3)
        #expect(machine.requestConnection(for: key, waiter: waiter(5), mayUseHTTP2: true) == .createConnection(key))
    }

    @Test func shutdownClosesH2ConnectionsAndFailsWaiters() {
        var machine = machine()
        _ = machine.requestConnection(for: key, waiter: waiter(1), mayUseHTTP2: true)
        let id = machine.makeConnectionID()
        _ = machine.http2ConnectionEstablished(id, key: key, maximumStreams: 1)
        _ = machine.requestConnection(for: key, waiter: waiter(2), mayUseHTTP2: true)
        let action = machine.shutdown()
        #expect(action.close == [id])
        #expect(action.fail == [waiter(2)])
        #expect(machine.http2StreamReleased(id) == .close(id))
    }
}
