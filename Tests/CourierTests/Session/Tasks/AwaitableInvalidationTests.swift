import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// `invalidateSession(cancelingTasks:resetSession:)`, the awaitable form of AFN's
/// `invalidateSessionCancelingTasks(_:resetSession:)`: when it returns, every task's completion
/// ran, no socket of the manager is open, and the did-become-invalid block, notification and
/// monitors were delivered. Checked right after the `await`, not eventually.
@Suite struct AwaitableInvalidationTests {
    /// Counts what the manager reports when it becomes invalid, through all three channels.
    final class InvalidationWitness: SessionEventMonitor, @unchecked Sendable {
        // @unchecked: the observer token is set once in init and only used in `stop()`.
        private let counts = Mutex((block: 0, notification: 0, monitor: 0))
        private var observer: (any NSObjectProtocol)?

        init(_ manager: URLSessionManager) {
            manager.setSessionDidBecomeInvalidBlock { _, _ in self.counts.withLock { $0.block += 1 } }
            manager.addEventMonitor(self)
            observer = NotificationCenter.default.addObserver(
                forName: .courierSessionDidInvalidate, object: manager, queue: nil
            ) { _ in self.counts.withLock { $0.notification += 1 } }
        }

        var block: Int { counts.withLock { $0.block } }
        var notification: Int { counts.withLock { $0.notification } }
        var monitor: Int { counts.withLock { $0.monitor } }

        func sessionDidInvalidate(_ manager: URLSessionManager) {
            counts.withLock { $0.monitor += 1 }
        }

        func stop() {
            if let observer { NotificationCenter.default.removeObserver(observer) }
        }
    }

    /// Keep-alive connections in the pool are closed by the time the call returns: this
    /// process holds no socket to the server, and the server sees every connection end.
    @Test func awaitingInvalidationClosesEveryConnection() async throws {
        let keepAlive = HostileScript.answer(headers: ["Content-Length: 2"], body: "ok", afterwards: .repeatSteps)
        try await HostileServer.withRunning(keepAlive) { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let witness = InvalidationWitness(manager)
            defer { witness.stop() }
            let recorders = (0..<3).map { _ in CompletionRecorder() }
            for (index, recorder) in recorders.enumerated() {
                manager.dataTask(with: URLRequest(url: server.url("/k\(index)")), completionHandler: recorder.handler).resume()
            }
            for recorder in recorders { await recorder.wait() }
            #expect(recorders.allSatisfy { $0.first?.error == nil })
            // Completions run before the connection goes back to the pool; wait until it has.
            try await eventually { ClientSocketProbe.sockets(toPort: server.port) > 0 }

            await manager.invalidateSession(cancelingTasks: false)

            #expect(ClientSocketProbe.sockets(toPort: server.port) == 0, "a socket to the server is still open")
            #expect(manager.tasks.isEmpty)
            #expect(witness.block == 1)
            #expect(witness.notification == 1)
            #expect(witness.monitor == 1)
            // The server learns of each close from the network: that takes its own time.
            try await eventually { server.openConnections == 0 }
        }
    }

    /// Without cancelling, a running task finishes first (successfully) and its completion has
    /// run when the call returns; the did-become-invalid block comes after it.
    @Test func waitsForRunningTasksWithoutCancelling() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let order = Mutex<[String]>([])
            manager.setSessionDidBecomeInvalidBlock { _, _ in order.withLock { $0.append("invalid") } }
            let recorder = CompletionRecorder()
            let task = manager.dataTask(
                with: URLRequest(url: server.sessionURL("/delay/1")),
                completionHandler: { response, object, error in
                    order.withLock { $0.append("completion") }
                    recorder.handler(response, object, error)
                })
            task.resume()
            try await eventually { server.requestsReceived >= 1 }

            await manager.invalidateSession(cancelingTasks: false)

            #expect(recorder.all.count == 1)
            #expect(recorder.first?.error == nil)
            #expect(recorder.first?.response?.statusCode == 200)
            #expect(task.state == .completed)
            #expect(manager.tasks.isEmpty)
            #expect(order.withLock { $0 } == ["completion", "invalid"])
        }
    }

    /// Cancelling: a task whose server never answers is cancelled, and its completion (with
    /// `cancelled`) has run when the call returns.
    @Test func cancellingInvalidationWaitsForTheCancelledCompletions() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let witness = InvalidationWitness(manager)
            defer { witness.stop() }
            let recorder = CompletionRecorder()
            manager.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response")), completionHandler: recorder.handler)
                .resume()
            try await eventually { server.requestsReceived >= 1 }

            await manager.invalidateSession(cancelingTasks: true)

            #expect(recorder.all.count == 1)
            guard case .cancelled = recorder.first?.error as? CourierError else {
                Issue.record("expected cancelled, got \(String(describing: recorder.first?.error))")
                return
            }
            #expect(manager.tasks.isEmpty)
            #expect(witness.block == 1 && witness.notification == 1 && witness.monitor == 1)
        }
    }

    /// Cancelling the waiting Swift task cancels the session's running tasks (as a
    /// cancelling invalidation would); the call still returns only once they completed.
    @Test func cancellingTheWaiterCancelsRunningTasks() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let witness = InvalidationWitness(manager)
            defer { witness.stop() }
            let recorder = CompletionRecorder()
            manager.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response")), completionHandler: recorder.handler)
                .resume()
            try await eventually { server.requestsReceived >= 1 }

            let waiter = Task { await manager.invalidateSession(cancelingTasks: false) }
            waiter.cancel()
            await waiter.value

            #expect(recorder.all.count == 1)
            guard case .cancelled = recorder.first?.error as? CourierError else {
                Issue.record("expected cancelled, got \(String(describing: recorder.first?.error))")
                return
            }
            #expect(witness.block == 1)
        }
    }

    /// A second call, one after the other or at the same time, returns too and breaks nothing:
    /// a task made afterwards still fails as on an invalidated session.
    @Test func invalidatingTwiceIsHarmless() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let witness = InvalidationWitness(manager)
            defer { witness.stop() }
            let (_, response) = try await manager.data(for: URLRequest(url: server.sessionURL("/get")))
            #expect(response.statusCode == 200)

            async let first: Void = manager.invalidateSession(cancelingTasks: false)
            async let second: Void = manager.invalidateSession(cancelingTasks: true)
            _ = await (first, second)
            await manager.invalidateSession(cancelingTasks: false)
            #expect(witness.block == 3 && witness.notification == 3 && witness.monitor == 3)
            #expect(ClientSocketProbe.sockets(toPort: server.port) == 0)

            let recorder = CompletionRecorder()
            manager.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: recorder.handler).resume()
            await recorder.wait()
            guard case .cancelled = recorder.first?.error as? CourierError else {
                Issue.record("expected cancelled, got \(String(describing: recorder.first?.error))")
                return
            }
        }
    }

    /// With `resetSession` the manager stays usable: the old connections are closed when the
    /// call returns, and the next task runs on a fresh engine.
    @Test func resettingInvalidationLeavesAUsableManager() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let (_, before) = try await manager.data(for: URLRequest(url: server.sessionURL("/get")))
            #expect(before.statusCode == 200)

            await manager.invalidateSession(cancelingTasks: false, resetSession: true)
            #expect(ClientSocketProbe.sockets(toPort: server.port) == 0)

            let (_, after) = try await manager.data(for: URLRequest(url: server.sessionURL("/get")))
            #expect(after.statusCode == 200)
            await manager.invalidateSession(cancelingTasks: false)
            #expect(ClientSocketProbe.sockets(toPort: server.port) == 0)
        }
    }
}
