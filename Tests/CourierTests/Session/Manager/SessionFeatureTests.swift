import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Synchronization
import Testing

/// Records what an event monitor sees.
final class RecordingMonitor: SessionEventMonitor {
    let events = Mutex<[String]>([])

    func taskDidResume(_ task: SessionTask) { events.withLock { $0.append("resume \(task.taskIdentifier)") } }
    func task(_ task: SessionTask, didFinishCollecting metrics: EngineMetrics) {
        events.withLock { $0.append("metrics \(task.taskIdentifier)") }
    }
    func taskDidComplete(_ task: SessionTask, response: HTTPURLResponse?, responseObject: (any Sendable)?, error: (any Error)?) {
        events.withLock { $0.append("complete \(task.taskIdentifier) \(response?.statusCode ?? 0)") }
    }
    func downloadTask(_ task: DownloadTask, didFailToMoveFileWith error: any Error) {
        events.withLock { $0.append("move failed \(task.taskIdentifier)") }
    }
}

@Suite("Session features")
struct SessionFeatureTests {
    @Test func multipartPostIsParsedByTheServer() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-part-\(UUID()).txt")
            try Data("file contents".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let recorder = CompletionRecorder()
            let task = manager.post("post", parameters: ["field": "value"], headers: nil, constructingBody: { form in
                try form.appendPart(fileURL: file, name: "upload")
            }, progress: nil, success: { _, object in
                recorder.handler(nil, object, nil)
            }, failure: { _, error in
                recorder.handler(nil, nil, error)
            })
            #expect(task != nil)
            await recorder.wait()
            #expect(recorder.first?.error == nil)
            let json = try #require(recorder.first?.object as? JSONValue)
            #expect(json["form"]?["field"] == "value")
            #expect(json["files"]?["upload"] == "file contents")
        }
    }

    @Test func multipartWithMissingFileFailsWithThePath() async throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:1"))
        let recorder = CompletionRecorder()
        let task = manager.post("post", parameters: nil, headers: nil, constructingBody: { form in
            try form.appendPart(fileURL: URL(fileURLWithPath: "/nonexistent/file.bin"), name: "f")
        }, progress: nil, success: nil, failure: { _, error in recorder.handler(nil, nil, error) })
        #expect(task == nil)
        await recorder.wait()
        let message = String(describing: recorder.first?.error)
        #expect(message.contains("/nonexistent/file.bin"))
    }

    @Test func eventMonitorSeesTheLifecycle() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let monitor = RecordingMonitor()
            manager.addEventMonitor(monitor)
            _ = try await manager.data(for: URLRequest(url: server.sessionURL("/get")))
            try await Task.sleep(for: .milliseconds(50))
            let events = monitor.events.withLock { $0 }
            #expect(events.count == 3)
            #expect(events.first?.hasPrefix("resume") == true)
            #expect(events.last?.hasPrefix("complete") == true)
            #expect(events.last?.hasSuffix("200") == true)
        }
    }

    /// A monitor that takes no task events leaves an awaited call on the lean direct path; it
    /// still hears every hop's metrics and the response, in order, before the call returns.
    @Test func aMonitorWithoutTaskEventsHearsEveryHopAndTheResponseBeforeTheCallReturns() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let monitor = RecordingMonitor()
            manager.addEventMonitor(monitor)
            _ = try await manager.data(for: URLRequest(url: server.sessionURL("/redirect/2")))
            var events = monitor.events.withLock { $0 }
            #expect(events.map { $0.split(separator: " ")[0] } == ["resume", "metrics", "metrics", "metrics", "complete"])
            #expect(events.last?.hasSuffix("200") == true)

            // The typed entry point keeps the engine's head and makes no HTTPURLResponse of its
            // own; the monitor still gets one.
            let request = HTTPRequest(method: .get, url: server.sessionURL("/get"))
            let (_, response) = try await manager.data(for: request)
            #expect(response.status == .ok)
            events = monitor.events.withLock { $0 }
            #expect(events.suffix(3).map { $0.split(separator: " ")[0] } == ["resume", "metrics", "complete"])
            #expect(events.last?.hasSuffix("200") == true)
        }
    }

    @Test func managerLevelDestinationWinsAndFailedMoveIsNotAnError() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let monitor = RecordingMonitor()
            manager.addEventMonitor(monitor)
            let managerDestination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mgr-\(UUID())")
            defer { try? FileManager.default.removeItem(at: managerDestination) }
            manager.setDownloadTaskDidFinishDownloadingBlock { _, _ in managerDestination }
            let recorder = CompletionRecorder()
            manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/bytes/1000")),
                destination: { _, _ in URL(fileURLWithPath: "/tmp/never-used-\(UUID())") },
                completionHandler: { response, url, error in recorder.handler(response, url, error) }
            ).resume()
            await recorder.wait()
            #expect(recorder.first?.object as? URL == managerDestination)
            #expect(FileManager.default.fileExists(atPath: managerDestination.path))

            // A destination in a missing directory: the move fails, the task still succeeds.
            manager.setDownloadTaskDidFinishDownloadingBlock(nil)
            let failing = CompletionRecorder()
            let notified = Mutex(false)
            let observer = NotificationCenter.default.addObserver(
                forName: .courierDownloadTaskDidFailToMoveFile, object: nil, queue: nil
            ) { _ in notified.withLock { $0 = true } }
            manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/bytes/1000")),
                destination: { _, _ in URL(fileURLWithPath: "/nonexistent-dir/\(UUID())") },
                completionHandler: { response, url, error in failing.handler(response, url, error) }
            ).resume()
            await failing.wait()
            NotificationCenter.default.removeObserver(observer)
            #expect(failing.first?.error == nil)
            #expect(notified.withLock { $0 })
            #expect(monitor.events.withLock { $0 }.contains { $0.hasPrefix("move failed") })
        }
    }

    @Test func readmeSessionExamples() async throws {
        try await TestServer.withRunning { server in
            // The README's two shapes, with the test server as the base URL.
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let done = CompletionRecorder()
            manager.get("get", parameters: ["page": 1], headers: nil, progress: nil,
                        success: { _, object in print(object ?? "nil"); done.handler(nil, object, nil) },
                        failure: { _, error in print(error); done.handler(nil, nil, error) })
            await done.wait()
            #expect(done.first?.error == nil)

            let (object, response) = try await manager.get("get", parameters: ["page": 1])
            #expect(response.statusCode == 200)
            #expect((object as? JSONValue)?["args"]?["page"] == "1")
        }
    }
}
