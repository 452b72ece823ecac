import Courier
import CourierEngine
import CourierTestServer
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOPosix
import Synchronization
import Testing

/// Records, per callback name, whether each call ran on a NIO event loop.
private final class LoopRecorder: Sendable {
    private let calls = Mutex<[String: [Bool]]>([:])

    func record(_ name: String) {
        let onLoop = MultiThreadedEventLoopGroup.currentEventLoop != nil
        calls.withLock { $0[name, default: []].append(onLoop) }
    }

    func calls(_ name: String) -> [Bool] { calls.withLock { $0[name] ?? [] } }
}

/// An event monitor that records where its callbacks run.
private struct LoopRecordingMonitor: SessionEventMonitor {
    let recorder: LoopRecorder

    func task(_ task: SessionTask, didFinishCollecting metrics: EngineMetrics) { recorder.record("monitor metrics") }
    func taskDidComplete(_ task: SessionTask, response: HTTPURLResponse?, responseObject: (any Sendable)?, error: (any Error)?) {
        recorder.record("monitor complete")
    }
}

/// User callbacks (progress blocks, the manager's hooks, event monitors) run on a per-task
/// serial queue: never on an event loop, in order, with the completion after the last progress.
@Suite("Callback delivery")
struct CallbackDeliveryTests {
    @Test func progressBlocksRunOffTheEventLoop() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let recorder = LoopRecorder()
            let completion = CompletionRecorder()
            var request = URLRequest(url: server.sessionURL("/upload"))
            request.httpMethod = "POST"
            request.httpBody = Data(count: 512 * 1024)
            let upload = manager.dataTask(
                with: request, uploadProgress: { _ in recorder.record("upload") },
                downloadProgress: { _ in recorder.record("download") }, completionHandler: completion.handler)
            upload.resume()
            await completion.wait()
            #expect(completion.first?.error == nil)

            let downloaded = CompletionRecorder()
            let download = manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/download/300000")), progress: { _ in recorder.record("file") },
                completionHandler: { response, url, error in
                    if let url { try? FileManager.default.removeItem(at: url) }
                    downloaded.handler(response, url, error)
                })
            download.resume()
            await downloaded.wait()
            #expect(downloaded.first?.error == nil)

            for name in ["upload", "download", "file"] {
                let calls = recorder.calls(name)
                #expect(!calls.isEmpty, "\(name) progress never called")
                #expect(!calls.contains(true), "\(name) progress ran on an event loop")
            }
        }
    }

    @Test func hooksAndMonitorsRunOffTheEventLoop() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let recorder = LoopRecorder()
            manager.addEventMonitor(LoopRecordingMonitor(recorder: recorder))
            manager.setTaskWillPerformHTTPRedirectionBlock { _, _, proposed in
                recorder.record("redirect")
                return proposed
            }
            manager.setDataTaskDidReceiveResponseBlock { _, _ in
                recorder.record("response")
                return .allow
            }
            manager.setDataTaskDidReceiveDataBlock { _, _ in recorder.record("data") }
            manager.setTaskDidSendBodyDataBlock { _, _, _, _ in recorder.record("sent") }
            manager.setTaskDidFinishCollectingMetricsBlock { _, _ in recorder.record("metrics") }
            manager.setTaskDidCompleteBlock { _, _ in recorder.record("complete") }

            let redirected = CompletionRecorder()
            manager.dataTask(with: URLRequest(url: server.sessionURL("/redirect/2")), completionHandler: redirected.handler).resume()
            await redirected.wait()
            #expect(redirected.first?.response?.statusCode == 200)

            let posted = CompletionRecorder()
            var request = URLRequest(url: server.sessionURL("/upload"))
            request.httpMethod = "POST"
            request.httpBody = Data(count: 256 * 1024)
            manager.dataTask(with: request, completionHandler: posted.handler).resume()
            await posted.wait()
            #expect(posted.first?.error == nil)
            // The monitor's completion comes after the completion handler.
            try await eventually { recorder.calls("monitor complete").count == 2 }

            for name in ["redirect", "response", "data", "sent", "metrics", "complete", "monitor metrics", "monitor complete"] {
                let calls = recorder.calls(name)
                #expect(!calls.isEmpty, "\(name) never called")
                #expect(!calls.contains(true), "\(name) ran on an event loop")
            }
        }
    }

    /// The did-become-invalid block, notification and monitor run on a dispatch queue: not on
    /// an event loop, and not on a thread of Swift's cooperative pool (a blocking block there
    /// would hold up every Swift task).
    @Test func invalidationIsReportedOffTheCooperativePool() async throws {
        let manager = URLSessionManager()
        let inSwiftTask = Mutex<Bool?>(nil)
        let reported = CompletionRecorder()
        manager.setSessionDidBecomeInvalidBlock { _, _ in
            let inTask = withUnsafeCurrentTask { $0 != nil }
            inSwiftTask.withLock { $0 = inTask || MultiThreadedEventLoopGroup.currentEventLoop != nil }
            reported.handler(nil, nil, nil)
        }
        manager.invalidateSessionCancelingTasks(true, resetSession: false)
        await reported.wait()
        #expect(inSwiftTask.withLock { $0 } == false, "the invalidation block ran in a Swift task or on an event loop")
    }

    /// A progress block that takes its time (here: until the other tasks are done) holds up
    /// only its own task. Several other tasks, so that one of them shares the slow task's
    /// event loop whatever loop each connection lands on.
    @Test func aSlowProgressBlockDoesNotStallOtherTasks() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let others = 4
            let othersDone = DispatchSemaphore(value: 0)
            let sawOthersFinish = Mutex<Bool?>(nil)
            let slow = CompletionRecorder()
            let slowTask = manager.dataTask(
                with: URLRequest(url: server.sessionURL("/download/200000")),
                downloadProgress: { _ in
                    let first = sawOthersFinish.withLock { seen -> Bool in
                        defer { if seen == nil { seen = false } }
                        return seen == nil
                    }
                    guard first else { return }
                    // A hang bound, not a timing assertion: the others finish in milliseconds
                    // unless this block is holding up their event loop.
                    var finished = true
                    for _ in 0..<others where othersDone.wait(timeout: .now() + 20) == .timedOut { finished = false }
                    sawOthersFinish.withLock { $0 = finished }
                }, completionHandler: slow.handler)
            slowTask.resume()
            try await eventually { sawOthersFinish.withLock { $0 } != nil }

            let recorders = (0..<others).map { _ in CompletionRecorder() }
            for recorder in recorders {
                manager.dataTask(
                    with: URLRequest(url: server.sessionURL("/bytes/1000")),
                    completionHandler: { response, object, error in
                        recorder.handler(response, object, error)
                        othersDone.signal()
                    }
                ).resume()
            }
            for recorder in recorders { await recorder.wait() }
            await slow.wait()
            #expect(slow.first?.error == nil)
            #expect(sawOthersFinish.withLock { $0 } == true, "the other tasks stalled while a progress block ran")
        }
    }

    /// AFNetworking's order: every progress call in order, then the completion (on the
    /// completion queue), then the did-complete notification.
    @Test func progressThenCompletionThenNotification() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let events = Mutex<[String]>([])
            let values = Mutex<[Int64]>([])
            let completion = CompletionRecorder()
            let notified = CompletionRecorder()
            let task = manager.dataTask(
                with: URLRequest(url: server.sessionURL("/download/400000")),
                downloadProgress: { progress in
                    values.withLock { $0.append(progress.completedUnitCount) }
                    events.withLock { $0.append("progress") }
                },
                completionHandler: { response, object, error in
                    events.withLock { $0.append("completion") }
                    completion.handler(response, object, error)
                })
            let observer = NotificationCenter.default.addObserver(forName: .courierTaskDidComplete, object: task, queue: nil) { _ in
                events.withLock { $0.append("notification") }
                notified.handler(nil, nil, nil)
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            task.resume()
            await completion.wait()
            await notified.wait()
            let recorded = events.withLock { $0 }
            let progressed = values.withLock { $0 }
            #expect(recorded.suffix(2) == ["completion", "notification"])
            #expect(recorded.dropLast(2).allSatisfy { $0 == "progress" })
            #expect(progressed == progressed.sorted())
            #expect(progressed.last == 400_000)
        }
    }
}
