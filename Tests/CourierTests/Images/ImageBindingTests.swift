import CourierTestServer
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

@testable import Courier

/// UIImageView+AFNetworking's rules as plain values.
@Suite struct ImageBindingStateTests {
    @Test func onlyTheActiveDownloadApplies() {
        var state = ImageBindingState<String>()
        guard case .start(let first, nil) = state.request(urlIdentifier: "http://h/a") else {
            Issue.record("expected a start")
            return
        }
        let attached = state.attach("receipt-a", to: first)
        #expect(attached)
        let same = state.request(urlIdentifier: "http://h/a")
        guard case .sameURL = same else {
            Issue.record("the same URL must be a no-op")
            return
        }
        guard case .start(let second, let cancel) = state.request(urlIdentifier: "http://h/b") else {
            Issue.record("expected a start")
            return
        }
        #expect(cancel == "receipt-a")
        let staleFinish = state.finish(first)
        #expect(!staleFinish)  // the old download's result is dropped
        let staleAttach = state.attach("late", to: first)
        #expect(!staleAttach)
        let finished = state.finish(second)
        #expect(finished)
        #expect(state.active == nil)
    }

    @Test func aBadURLCancelsAndCancelForgets() {
        var state = ImageBindingState<String>()
        guard case .start(let id, _) = state.request(urlIdentifier: "http://h/a") else { return }
        _ = state.attach("r", to: id)
        guard case .badURL(let cancel) = state.request(urlIdentifier: nil) else {
            Issue.record("expected badURL")
            return
        }
        #expect(cancel == "r")
        guard case .start(let next, _) = state.request(urlIdentifier: "http://h/a") else { return }
        _ = state.attach("r2", to: next)
        let cancelled = state.cancel()
        #expect(cancelled == "r2")
        let again = state.cancel()
        #expect(again == nil)
    }

    @Test func progressFractionNeedsAnExpectedCount() {
        #expect(TaskProgressBinding.fraction(completed: 50, expected: 200) == 0.25)
        #expect(TaskProgressBinding.fraction(completed: 5, expected: 0) == nil)
        #expect(TaskProgressBinding.fraction(completed: 5, expected: -1) == nil)
        #expect(TaskProgressBinding.fraction(completed: 300, expected: 200) == 1)
    }
}

/// What a view bound through ImageLoadingBinding showed, in order ("nil" for a cleared image).
final class DisplayRecorder: Sendable {
    private let storage = Mutex<[String]>([])
    var shown: [String] { storage.withLock { $0 } }
    var display: @Sendable (Image?) -> Void {
        { image in self.storage.withLock { $0.append(image.map { "\($0.format.rawValue) \($0.pixelWidth)x\($0.pixelHeight)" } ?? "nil") } }
    }
}

@Suite struct ImageLoadingBindingTests {
    static let placeholder = Image(data: pngHeader(width: 1, height: 1))!

    @Test func placeholderThenImageThenCacheHitAtOnce() async throws {
        try await TestServer.withRunning { server in
            let downloader = ImageDownloaderTests.makeDownloader()
            let binding = ImageLoadingBinding(downloader: downloader)
            let view = DisplayRecorder()
            binding.setImage(with: server.sessionURL("/image/gif"), placeholder: Self.placeholder, display: view.display)
            #expect(view.shown == ["png 1x1"])
            #expect(binding.activeReceipt != nil)
            // The same URL while loading: a no-op (nothing shown, nothing sent twice).
            binding.setImage(with: server.sessionURL("/image/gif"), placeholder: Self.placeholder, display: view.display)
            try await eventually { view.shown.count == 2 }
            #expect(view.shown == ["png 1x1", "gif 16x12"])
            #expect(binding.activeReceipt == nil)
            // A cache hit applies before the call returns.
            let other = DisplayRecorder()
            ImageLoadingBinding(downloader: downloader).setImage(
                with: server.sessionURL("/image/gif"), placeholder: Self.placeholder, display: other.display)
            #expect(other.shown == ["gif 16x12"])
            #expect(server.requestsReceived(forPath: "/image/gif") == 1)
        }
    }

    @Test func aNewURLCancelsTheOldDownloadAndOnlyTheNewImageApplies() async throws {
        try await TestServer.withRunning { server in
            let downloader = ImageDownloaderTests.makeDownloader()
            let binding = ImageLoadingBinding(downloader: downloader)
            let view = DisplayRecorder()
            let failures = Mutex(0)
            binding.setImage(
                with: URLRequest(url: server.sessionURL("/fault/no-response")), placeholder: nil, display: view.display,
                success: nil, failure: { _, _, _ in failures.withLock { $0 += 1 } })
            let stalled = try #require(binding.activeReceipt)
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 1 }
            binding.setImage(with: server.sessionURL("/image/jpeg"), placeholder: nil, display: view.display)
            try await eventually { view.shown == ["jpeg 16x12"] && stalled.task.state == .completed }
            #expect(failures.withLock { $0 } == 0)  // the replaced download is no longer active
        }
    }

    @Test func aBadURLShowsThePlaceholderAndFails() async throws {
        let binding = ImageLoadingBinding(downloader: ImageDownloaderTests.makeDownloader())
        let view = DisplayRecorder()
        let failed = Mutex<(any Error)?>(nil)
        binding.setImage(
            with: URLRequest(url: URL(string: "ftp://example.com/a.png")!), placeholder: Self.placeholder, display: view.display,
            success: nil, failure: { _, _, error in failed.withLock { $0 = error } })
        #expect(view.shown == ["png 1x1"])
        let error = failed.withLock { $0 }
        guard case CourierError.requestSerializationFailed(.invalidURL)? = error else {
            Issue.record("expected invalidURL")
            return
        }
    }
}

@Suite struct TaskRunningStateBindingTests {
    @Test func followsTheTasksNotifications() async throws {
        try await TestServer.withRunning { server in
            let center = NotificationCenter.default
            let states = Mutex<[Bool]>([])
            let binding = TaskRunningStateBinding(notificationCenter: center) { running in states.withLock { $0.append(running) } }
            let session = URLSessionManager()
            session.responseSerializer = HTTPResponseSerializer()
            let task = session.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response")))
            binding.bind(to: task)
            #expect(states.withLock { $0 } == [false])
            task.resume()
            try await eventually { states.withLock { $0 } == [false, true] }
            task.cancel()
            try await eventually { states.withLock { $0 } == [false, true, false] }
            binding.unbind()
        }
    }

    /// bind reads the task's state, then calls `update` with it; a notification's `update` can
    /// come between the two. Here the task ends right after bind read "running": the complete
    /// notification's `update(false)` ran first and bind's `update(true)` last, so the binding
    /// showed a finished task as running for good. The first `update` call itself cancels the
    /// task and waits for the completion's call, which makes that order certain.
    @Test func aTaskEndingWhileBoundIsNotLeftShownAsRunning() async throws {
        try await TestServer.withRunning { server in
            let session = URLSessionManager()
            session.responseSerializer = HTTPResponseSerializer()
            let task = session.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response")))
            task.resume()
            try await eventually { task.state == .running }
            let states = Mutex<[Bool]>([])
            let completed = DispatchSemaphore(value: 0)
            let first = Mutex(true)
            let binding = TaskRunningStateBinding(notificationCenter: .default) { running in
                if first.withLock({ isFirst in defer { isFirst = false }; return isFirst }) {
                    task.cancel()
                    // The completion's update (another thread) comes in meanwhile; bound wait.
                    _ = completed.wait(timeout: .now() + 60)
                    states.withLock { $0.append(running) }
                } else {
                    // Recorded before the signal: the waiting first call appends right after it.
                    states.withLock { $0.append(running) }
                    if !running { completed.signal() }
                }
            }
            binding.bind(to: task)
            #expect(task.state == .completed)
            #expect(states.withLock { $0.first } == false)  // the completion's, recorded first
            #expect(states.withLock { $0.last } == false, "bound to a finished task, the binding shows it running")
            binding.unbind()
        }
    }

    /// A task posts its resume after its state turns running, outside its lock: a cancel on
    /// another thread can complete it and post the completion first. The late resume then
    /// showed the finished task as running for good. Posted by hand here in that order.
    @Test func aResumePostedAfterItsTaskCompletedDoesNotShowItRunning() async throws {
        try await TestServer.withRunning { server in
            let center = NotificationCenter()
            let session = URLSessionManager()
            let task = session.dataTask(with: URLRequest(url: server.sessionURL("/get")))
            task.resume()
            try await eventually { task.state == .completed }
            let states = Mutex<[Bool]>([])
            let binding = TaskRunningStateBinding(notificationCenter: center) { running in states.withLock { $0.append(running) } }
            binding.bind(to: task)
            center.post(name: .courierTaskDidComplete, object: task)
            center.post(name: .courierTaskDidResume, object: task)
            #expect(states.withLock { $0 } == [false, false, false], "a completed task shown as running")
            binding.unbind()
        }
    }
}
