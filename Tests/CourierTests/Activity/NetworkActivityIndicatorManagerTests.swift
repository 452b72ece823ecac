import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// A clock moved by hand: wake-ups run when ``advance(by:)`` passes their deadline.
final class ManualActivityClock: NetworkActivityClock {
    private let state = Mutex<(now: Double, pending: [(deadline: Double, action: @Sendable () -> Void)])>((100, []))

    var now: Double { state.withLock { $0.now } }

    func schedule(at deadline: Double, _ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.pending.append((deadline, action)) }
    }

    func advance(by seconds: Double) {
        let due = state.withLock { state in
            state.now += seconds
            let now = state.now
            let due = state.pending.filter { $0.deadline <= now }
            state.pending.removeAll { $0.deadline <= now }
            return due
        }
        for wake in due { wake.action() }
    }
}

/// What a visibility block saw, in order.
final class VisibilityRecorder: Sendable {
    private let storage = Mutex<[Bool]>([])
    var changes: [Bool] { storage.withLock { $0 } }
    var block: @Sendable (Bool) -> Void { { visible in self.storage.withLock { $0.append(visible) } } }
}

/// AFNetworkActivityManagerTests with an injected clock: the delays are checked by moving time,
/// never by waiting for it.
@Suite struct NetworkActivityIndicatorManagerTests {
    let clock = ManualActivityClock()
    let visibility = VisibilityRecorder()

    func makeManager(center: NotificationCenter = NotificationCenter()) -> NetworkActivityIndicatorManager {
        let manager = NetworkActivityIndicatorManager(notificationCenter: center, clock: clock)
        manager.isEnabled = true
        manager.setNetworkingActivityActionWithBlock(visibility.block)
        return manager
    }

    /// A manager on `NotificationCenter.default` counting only `server`'s tasks (other suites run
    /// beside this one), a session, and two of its tasks (not resumed) the server never answers.
    func managerAndTwoUnansweredTasks(
        on server: TestServer
    ) -> (NetworkActivityIndicatorManager, URLSessionManager, DataTask, DataTask) {
        let manager = makeManager(center: .default)
        let port = server.port
        manager.taskFilter = { $0.originalRequest?.url?.port == port }
        let session = URLSessionManager()
        session.responseSerializer = HTTPResponseSerializer()
        let first = session.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response?i=1")))
        let second = session.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response?i=2")))
        return (manager, session, first, second)
    }

    @Test func defaultsAreAFNs() {
        let manager = NetworkActivityIndicatorManager(notificationCenter: NotificationCenter())
        #expect(!manager.isEnabled)
        #expect(manager.activationDelay == 1.0)
        #expect(manager.completionDelay == 0.17)
        #expect(!manager.isNetworkActivityIndicatorVisible)
    }

    @Test func manualCountsShowAfterTheActivationDelayAndHideAfterTheCompletionDelay() async throws {
        let manager = makeManager()
        manager.incrementActivityCount()
        clock.advance(by: 0.99)
        #expect(!manager.isNetworkActivityIndicatorVisible)
        clock.advance(by: 0.01)
        #expect(manager.isNetworkActivityIndicatorVisible)
        manager.decrementActivityCount()
        manager.decrementActivityCount()  // floored at 0
        #expect(manager.activityCount == 0)
        clock.advance(by: 0.16)
        #expect(manager.isNetworkActivityIndicatorVisible)
        clock.advance(by: 0.01)
        #expect(!manager.isNetworkActivityIndicatorVisible)
        try await eventually { visibility.changes == [true, false] }
    }

    @Test func nothingShowsWhileDisabledAndDisablingHides() async throws {
        let manager = makeManager()
        manager.isEnabled = false
        manager.incrementActivityCount()
        clock.advance(by: 2)
        #expect(!manager.isNetworkActivityIndicatorVisible)
        manager.isEnabled = true
        manager.incrementActivityCount()
        clock.advance(by: 1)
        #expect(manager.isNetworkActivityIndicatorVisible)
        manager.isEnabled = false
        #expect(!manager.isNetworkActivityIndicatorVisible)
        try await eventually { visibility.changes == [true, false] }
    }

    /// Overlapping requests of a real session: one "on", one "off"; a request starting during the
    /// completion delay keeps the indicator on without a second "on".
    @Test func overlappingRequestsAreCoalesced() async throws {
        try await TestServer.withRunning { server in
            let (manager, session, first, second) = managerAndTwoUnansweredTasks(on: server)
            first.resume()
            second.resume()
            try await eventually { manager.activityCount == 2 }
            clock.advance(by: 1.0)
            #expect(manager.isNetworkActivityIndicatorVisible)
            first.cancel()
            try await eventually { manager.activityCount == 1 }
            clock.advance(by: 1)
            #expect(manager.isNetworkActivityIndicatorVisible)
            second.cancel()
            try await eventually { manager.activityCount == 0 }
            clock.advance(by: 0.1)  // inside the completion delay
            let third = session.dataTask(with: URLRequest(url: server.sessionURL("/image/png")))
            third.resume()
            try await eventually { third.state == .completed && manager.activityCount == 0 }
            clock.advance(by: 0.1)  // the first completion delay's wake-up is stale now
            #expect(manager.isNetworkActivityIndicatorVisible)
            clock.advance(by: 0.1)
            #expect(!manager.isNetworkActivityIndicatorVisible)
            try await eventually { visibility.changes == [true, false] }
            #expect(visibility.changes == [true, false])
        }
    }

    /// A task suspended and then cancelled posts suspend, then complete: counting each as −1
    /// took one off for another task still running, and the indicator hid while it ran. Each
    /// task counts once while it runs, whatever it posts and whatever the filter says later.
    @Test func aTaskCancelledWhileSuspendedLeavesTheOthersCounted() async throws {
        try await TestServer.withRunning { server in
            let (manager, _, running, suspended) = managerAndTwoUnansweredTasks(on: server)
            let completions = Mutex(0)
            let observer = NotificationCenter.default.addObserver(forName: .courierTaskDidComplete, object: suspended, queue: nil) { _ in
                completions.withLock { $0 += 1 }
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            running.resume()
            suspended.resume()
            try await eventually { manager.activityCount == 2 }
            suspended.suspend()
            try await eventually { manager.activityCount == 1 }
            suspended.cancel()
            try await eventually { completions.withLock { $0 } == 1 }
            #expect(manager.activityCount == 1)
            clock.advance(by: 1.0)
            #expect(manager.isNetworkActivityIndicatorVisible)
            // Notifications of a task never counted (a repeated one, one posted by hand) change nothing.
            NotificationCenter.default.post(name: .courierTaskDidComplete, object: suspended)
            NotificationCenter.default.post(name: .courierTaskDidSuspend, object: suspended)
            #expect(manager.activityCount == 1)
            running.cancel()
            try await eventually { manager.activityCount == 0 }
        }
    }

    /// A task's resume notification is posted after its state turns running, outside its lock:
    /// a cancel on another thread can complete the task and post its completion first. That
    /// late resume counted a finished task for good (the indicator stayed on and the manager
    /// held the task). The notifications are posted by hand here in that order.
    @Test func aResumePostedAfterItsTaskCompletedIsNotCounted() async throws {
        try await TestServer.withRunning { server in
            let center = NotificationCenter()
            let manager = makeManager(center: center)
            let session = URLSessionManager()
            let task = session.dataTask(with: URLRequest(url: server.sessionURL("/get")))
            task.resume()
            try await eventually { task.state == .completed }
            center.post(name: .courierTaskDidComplete, object: task)
            center.post(name: .courierTaskDidResume, object: task)
            #expect(manager.activityCount == 0, "a completed task counted as running")
        }
    }

    @Test func suspendCountsAsFinishedAndTasksWithoutAURLAreIgnored() async throws {
        try await TestServer.withRunning { server in
            let center = NotificationCenter()
            let manager = makeManager(center: center)
            let session = URLSessionManager()
            let task = session.dataTask(with: URLRequest(url: server.sessionURL("/get")))
            center.post(name: .courierTaskDidResume, object: task)
            #expect(manager.activityCount == 1)
            center.post(name: .courierTaskDidSuspend, object: task)
            #expect(manager.activityCount == 0)
            var noURL = URLRequest(url: server.sessionURL("/get"))
            noURL.url = nil
            center.post(name: .courierTaskDidResume, object: session.dataTask(with: noURL))
            center.post(name: .courierTaskDidResume, object: "not a task")
            #expect(manager.activityCount == 0)
        }
    }
}
