@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// A task's notifications (resume, suspend, completion) are posted in the order of the state
/// transitions that caused them, on both drivers, even when another thread (or an observer
/// calling back into the task) causes a transition while a post is still under way.
/// See ``TaskNotificationOutbox``.
@Suite("task notification order")
struct TaskNotificationOrderTests {
    /// The notifications posted for one task, as `resume`, `suspend` or `complete`, in the
    /// order its observer saw them. `beforeNextResume` runs inside the next resume's post,
    /// before it is recorded (an observer calling back into the task).
    final class Trail: @unchecked Sendable {
        private let entries = Mutex<[String]>([])
        private let hook = Mutex<(@Sendable () -> Void)?>(nil)
        /// Written in `init` only.
        private var observers: [any NSObjectProtocol] = []

        init(for task: SessionTask) {
            let names: [(Notification.Name, String)] = [
                (.courierTaskDidResume, "resume"), (.courierTaskDidSuspend, "suspend"), (.courierTaskDidComplete, "complete"),
            ]
            for (name, entry) in names {
                let observer = NotificationCenter.default.addObserver(forName: name, object: task, queue: nil) { [weak self] _ in
                    guard let self else { return }
                    if entry == "resume", let hook = self.hook.withLock({ hook in defer { hook = nil }; return hook }) { hook() }
                    self.entries.withLock { $0.append(entry) }
                }
                observers.append(observer)
            }
        }

        func beforeNextResume(_ body: @escaping @Sendable () -> Void) { hook.withLock { $0 = body } }
        var values: [String] { entries.withLock { $0 } }

        func stop() {
            for observer in observers { NotificationCenter.default.removeObserver(observer) }
        }
    }

    /// Lets threads start a loop together (each spins until all arrived).
    final class StartGate: Sendable {
        private let arrived = Atomic<Int>(0)
        func arriveAndWait(for count: Int) {
            arrived.add(1, ordering: .sequentiallyConsistent)
            while arrived.load(ordering: .sequentiallyConsistent) < count {}
        }
    }

    /// Waits (blocking the calling thread, never a Swift-concurrency one) until `condition`
    /// holds, up to `seconds` (a hang bound); false if it never did.
    static func blockingWait(upTo seconds: Double = 30, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(1000)
        }
        return true
    }

    /// Runs `body` on a thread of its own and returns when it has returned.
    static func onThread(_ body: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                body()
                continuation.resume()
            }
        }
    }

    /// A valid trail: resume and suspend alternate from `first`, and the completion comes once, last.
    static func isInTransitionOrder(_ trail: [String], first: String = "resume") -> Bool {
        var expected = first
        for (index, entry) in trail.enumerated() {
            if entry == "complete" { return index == trail.count - 1 }
            guard entry == expected else { return false }
            expected = expected == "resume" ? "suspend" : "resume"
        }
        return false  // no completion
    }

    // MARK: - A completion caused while a resume is being posted

    @Test("TaskDelegate: a cancel while a resume is posted completes the task, but its completion is posted after the resume")
    func delegateCompletionWaitsForTheResumeBeingPosted() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let group = DispatchGroup()
            manager.completionGroup = group
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response")), completionHandler: recorder.handler)
            let trail = Trail(for: task)
            defer { trail.stop() }
            task.resume()
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 1 }
            task.suspend()
            // The resume's observer cancels the task and waits until its completion has been
            // delivered (the block ran, the completion queue's work returned) before it
            // records the resume: a completion posted by that work is seen first.
            trail.beforeNextResume {
                task.cancel()
                _ = Self.blockingWait { !recorder.all.isEmpty }
                _ = group.wait(timeout: .now() + 30)
            }
            await Self.onThread { task.resume() }
            try await eventually { trail.values.count == 4 }
            #expect(trail.values == ["resume", "suspend", "resume", "complete"])
            #expect(recorder.all.count == 1)
            #expect(task.state == .completed)
        }
    }

    @Test("DirectTaskRunner: a cancel while a resume is posted completes the task, but its completion is posted after the resume")
    func directRunnerCompletionWaitsForTheResumeBeingPosted() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let request = URLRequest(url: server.sessionURL("/fault/no-response"))
            let returned = Atomic<Bool>(false)
            let call = Task {
                _ = try? await manager.runKeepingEngineHead(request)
                returned.store(true, ordering: .sequentiallyConsistent)
            }
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 1 }
            let task = try #require(manager.tasks.first)
            #expect(task.delegate is DirectTaskRunner)
            let trail = Trail(for: task)
            defer { trail.stop() }
            task.suspend()
            // The awaited call ends (its completion done) while the resume is being posted.
            trail.beforeNextResume {
                task.cancel()
                _ = Self.blockingWait { returned.load(ordering: .sequentiallyConsistent) }
            }
            await Self.onThread { task.resume() }
            await call.value
            try await eventually { trail.values.count == 3 }
            #expect(trail.values == ["suspend", "resume", "complete"])
            #expect(task.state == .completed)
        }
    }

    // MARK: - An observer calling back into the task

    @Test("an observer that suspends the task from its resume sees the suspension posted after the resume, on both drivers")
    func aTransitionCausedByAnObserverIsPostedAfterThePostThatCausedIt() async throws {
        try await TestServer.withRunning { server in
            for direct in [true, false] {
                let manager = URLSessionManager()
                if !direct { manager.addEventMonitor(DirectTaskRunnerTests.NoOpMonitor()) }
                let request = URLRequest(url: server.sessionURL("/fault/no-response"))
                let call = Task { _ = try? await manager.runKeepingEngineHead(request) }
                try await eventually { manager.tasks.first?.state == .running }
                let task = try #require(manager.tasks.first)
                #expect((task.delegate is DirectTaskRunner) == direct)
                let trail = Trail(for: task)
                task.suspend()
                trail.beforeNextResume { task.suspend() }
                task.resume()
                #expect(task.state == .suspended)
                task.cancel()
                await call.value
                try await eventually { trail.values.count == 4 }
                trail.stop()
                #expect(trail.values == ["suspend", "resume", "suspend", "complete"], "direct: \(direct)")
            }
        }
    }

    // MARK: - Stress: two threads

    /// One task suspended on one thread and resumed on another many times (both start
    /// together), then cancelled while the resumes go on: its trail must follow its transitions.
    private static func crossControls(of task: SessionTask, rounds: Int) async {
        let gate = StartGate()
        @Sendable func startTogether() { gate.arriveAndWait(for: 2) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await onThread {
                    startTogether()
                    for _ in 0..<rounds { task.suspend() }
                    task.cancel()
                }
            }
            group.addTask {
                await onThread {
                    startTogether()
                    for _ in 0..<rounds { task.resume() }
                }
            }
            await group.waitForAll()
        }
    }

    @Test("tasks suspended on one thread and resumed on another, then cancelled: each trail follows the transitions (TaskDelegate)")
    func delegateTasksUnderCrossingControls() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            var bad: [[String]] = []
            for index in 0..<12 {
                let recorder = CompletionRecorder()
                let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response")), completionHandler: recorder.handler)
                let trail = Trail(for: task)
                task.resume()
                try await eventually { server.requestsReceived(forPath: "/fault/no-response") == index + 1 }
                await Self.crossControls(of: task, rounds: 300)
                await recorder.wait()
                try await eventually { trail.values.last == "complete" }
                trail.stop()
                if !Self.isInTransitionOrder(trail.values) { bad.append(trail.values) }
            }
            #expect(bad.isEmpty, "\(bad.count) of 12 trails out of order, e.g. \(bad.first.map { $0.suffix(8) } ?? [])")
        }
    }

    @Test("tasks suspended on one thread and resumed on another, then cancelled: each trail follows the transitions (DirectTaskRunner)")
    func directTasksUnderCrossingControls() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            var bad: [[String]] = []
            for index in 0..<12 {
                let call = Task { _ = try? await manager.runKeepingEngineHead(URLRequest(url: server.sessionURL("/fault/no-response"))) }
                try await eventually { server.requestsReceived(forPath: "/fault/no-response") == index + 1 }
                let task = try #require(manager.tasks.first)
                let trail = Trail(for: task)
                await Self.crossControls(of: task, rounds: 300)
                await call.value
                try await eventually { trail.values.last == "complete" }
                trail.stop()
                // The trail starts after the first resume: the task is running.
                if !Self.isInTransitionOrder(trail.values, first: "suspend") { bad.append(trail.values) }
            }
            #expect(bad.isEmpty, "\(bad.count) of 12 trails out of order, e.g. \(bad.first.map { $0.suffix(8) } ?? [])")
        }
    }
}
