@testable import Courier
@testable import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A task's engine transfer follows its last transition: an observer of the resume
/// notification that suspends the task (the notification is posted while `resume()` runs)
/// leaves the transfer paused, on both drivers. The resume used to reach the engine after its
/// notification was posted, so it undid the observer's pause: the task read `.suspended` while
/// its transfer ran on to the end.
@Suite("suspend from a resume observer")
struct SuspendFromResumeObserverTests {
    /// The engine task of `task`'s exchange in flight, whichever driver runs it.
    private static func engineTask(of task: SessionTask) -> EngineTask? {
        switch task.delegate {
        case let delegate as TaskDelegate: delegate.run.withLock { $0.engineTask }
        case let runner as DirectTaskRunner: runner.engineTask
        default: nil
        }
    }

    /// Suspends `task` (running an exchange), then resumes it with an observer of the resume
    /// notification that suspends it again; returns whether the engine is paused then.
    private static func suspendFromTheResumeObserver(_ task: SessionTask) async throws -> Bool {
        try await eventually { engineTask(of: task) != nil }
        task.suspend()
        let observer = NotificationCenter.default.addObserver(forName: .courierTaskDidResume, object: task, queue: nil) { _ in
            task.suspend()
        }
        task.resume()
        NotificationCenter.default.removeObserver(observer)
        #expect(task.state == .suspended)
        return try #require(engineTask(of: task)).execution.isReadingPaused
    }

    @Test("TaskDelegate: the observer's suspension pauses the engine for good")
    func delegateStaysPaused() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response")), completionHandler: recorder.handler)
            task.resume()
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 1 }
            #expect(try await Self.suspendFromTheResumeObserver(task), "the task reads suspended, its transfer runs")
            task.cancel()
            await recorder.wait()
        }
    }

    @Test("DirectTaskRunner: the observer's suspension pauses the engine for good")
    func directRunnerStaysPaused() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let call = Task { _ = try? await manager.runKeepingEngineHead(URLRequest(url: server.sessionURL("/fault/no-response"))) }
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 1 }
            let task = try #require(manager.tasks.first)
            #expect(task.delegate is DirectTaskRunner)
            #expect(try await Self.suspendFromTheResumeObserver(task), "the task reads suspended, its transfer runs")
            task.cancel()
            await call.value
        }
    }
}
