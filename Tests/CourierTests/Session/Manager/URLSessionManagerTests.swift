import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import Synchronization
import Testing

@Suite("URLSessionManager against the test server")
struct URLSessionManagerTests {
    @Test func dataTaskParsesJSONAndCompletesOnce() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/get?a=1")), completionHandler: recorder.handler)
            #expect(task.state == .suspended)
            #expect(manager.tasks.count == 1)
            task.resume()
            await recorder.wait()
            try await Task.sleep(for: .milliseconds(50))
            #expect(recorder.all.count == 1)
            let call = try #require(recorder.first)
            #expect(call.error == nil)
            #expect(call.response?.statusCode == 200)
            let json = try #require(call.object as? JSONValue)
            #expect(json["args"]?["a"] == "1")
            #expect(task.state == .completed)
            #expect(manager.tasks.isEmpty)
        }
    }

    @Test func statusFailureGivesObjectAndError() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let recorder = CompletionRecorder()
            manager.dataTask(with: URLRequest(url: server.sessionURL("/status/404")), completionHandler: recorder.handler).resume()
            await recorder.wait()
            let call = try #require(recorder.first)
            #expect(call.response?.statusCode == 404)
            let error = try #require(call.error as? CourierError)
            guard case .unacceptableStatusCode = error else {
                Issue.record("expected unacceptableStatusCode, got \(error)")
                return
            }
            #expect("\(error)".contains("404"))
        }
    }

    @Test func transportErrorSkipsSerialization() async throws {
        let manager = URLSessionManager()
        let recorder = CompletionRecorder()
        manager.dataTask(with: URLRequest(url: URL(string: "http://127.0.0.1:1/")!), completionHandler: recorder.handler).resume()
        await recorder.wait()
        let call = try #require(recorder.first)
        #expect(call.object == nil)
        guard case .cannotConnect = call.error as? CourierError else {
            Issue.record("expected cannotConnect, got \(String(describing: call.error))")
            return
        }
    }

    @Test func cancelBeforeResumeAndMidBodyCompleteOnceWithCancelled() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let early = CompletionRecorder()
            let never = manager.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: early.handler)
            never.cancel()
            await early.wait()
            guard case .cancelled = early.first?.error as? CourierError else {
                Issue.record("expected cancelled, got \(String(describing: early.first?.error))")
                return
            }
            let mid = CompletionRecorder()
            let running = manager.dataTask(
                with: URLRequest(url: server.sessionURL("/drip?duration=20&numbytes=20&delay=0")), completionHandler: mid.handler)
            running.resume()
            // Cancel mid-body: once a byte arrived, with most of the 20 s drip still to come.
            for _ in 0..<500 where running.countOfBytesReceived == 0 { try await Task.sleep(for: .milliseconds(20)) }
            running.cancel()
            await mid.wait()
            try await Task.sleep(for: .milliseconds(100))
            #expect(mid.all.count == 1)
            guard case .cancelled = mid.first?.error as? CourierError else {
                Issue.record("expected cancelled, got \(String(describing: mid.first?.error))")
                return
            }
            #expect(manager.tasks.isEmpty)
        }
    }

    @Test func uploadProgressIsMonotonicAndReachesTotal() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let fractions = Mutex<[Double]>([])
            let recorder = CompletionRecorder()
            var request = URLRequest(url: server.sessionURL("/upload"))
            request.httpMethod = "POST"
            let body = Data(repeating: 0x41, count: 4 << 20)
            manager.uploadTask(with: request, from: body, progress: { progress in
                fractions.withLock { $0.append(progress.fractionCompleted) }
            }, completionHandler: recorder.handler).resume()
            await recorder.wait()
            let seen = fractions.withLock { $0 }
            #expect(!seen.isEmpty)
            #expect(seen == seen.sorted())
            #expect(seen.last == 1.0)
            let json = try #require(recorder.first?.object as? JSONValue)
            #expect(json["bytes"] == .int(4 << 20))
        }
    }

    @Test func downloadTaskMovesFileToDestination() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(UUID()).bin")
            defer { try? FileManager.default.removeItem(at: destination) }
            let done = Mutex<(URL?, (any Error)?)?>(nil)
            let recorder = CompletionRecorder()
            let task = manager.downloadTask(
                with: URLRequest(url: server.sessionURL("/bytes/102400?seed=3")),
                destination: { _, _ in destination },
                completionHandler: { response, url, error in
                    done.withLock { $0 = (url, error) }
                    recorder.handler(response, url, error)
                })
            task.resume()
            await recorder.wait()
            let (url, error) = try #require(done.withLock { $0 })
            #expect(error == nil)
            #expect(url == destination)
            let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
            #expect((attributes[.size] as? NSNumber)?.intValue == 102_400)
        }
    }

    @Test func suspendStopsTheTransfer() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let recorder = CompletionRecorder()
            let task = manager.dataTask(
                // 12 s of drip: room for a starved test task to suspend before the end.
                with: URLRequest(url: server.sessionURL("/drip?duration=12&numbytes=60&delay=0")),
                completionHandler: recorder.handler)
            task.resume()
            // Suspend once bytes are flowing (the machine may be slow to start the drip).
            for _ in 0..<250 where task.countOfBytesReceived < 2 { try await Task.sleep(for: .milliseconds(20)) }
            task.suspend()
            #expect(task.state == .suspended)
            // A read the socket was already asked for may still land, whenever the server's next
            // byte comes (every 200 ms, later on a loaded machine); after that, nothing. So the
            // count must hold for 1.5 s (7 drip intervals) before it is taken.
            let atSuspend = try await settled(interval: .milliseconds(1_500)) { task.countOfBytesReceived }
            try await Task.sleep(for: .seconds(1))
            #expect(task.countOfBytesReceived == atSuspend)
            #expect(atSuspend < 60)
            task.resume()
            await recorder.wait()
            #expect(task.countOfBytesReceived == 60)
        }
    }

    @Test func notificationsArriveInOrderWithUserInfo() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let names = Mutex<[String]>([])
            let completeInfo = Mutex<[String]>([])
            let center = NotificationCenter.default
            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/json")), completionHandler: recorder.handler)
            let observers = [Notification.Name.courierTaskDidResume, .courierTaskDidComplete].map { name in
                center.addObserver(forName: name, object: task, queue: nil) { notification in
                    names.withLock { $0.append(notification.name.rawValue) }
                    if notification.name == .courierTaskDidComplete {
                        completeInfo.withLock { $0 = (notification.userInfo?.keys.compactMap { $0 as? String } ?? []).sorted() }
                    }
                }
            }
            task.resume()
            await recorder.wait()
            try await Task.sleep(for: .milliseconds(100))
            observers.forEach(center.removeObserver)
            #expect(names.withLock { $0 } == ["com.alamofire.networking.task.resume", "com.alamofire.networking.task.complete"])
            let keys = completeInfo.withLock { $0 }
            #expect(keys.contains(SessionNotificationKey.responseSerializer))
            #expect(keys.contains(SessionNotificationKey.responseData))
            #expect(keys.contains(SessionNotificationKey.serializedResponse))
            #expect(keys.contains(SessionNotificationKey.metrics))
        }
    }

    @Test func suspendStopsSendingTheBody() async throws {
        try await TestServer.withRunning { server in
            let total: Int64 = 256 << 20
            let chunk = ByteBuffer(repeating: UInt8(ascii: "u"), count: 64 << 10)
            let body = RequestBody.stream(length: total) { writer in
                for _ in 0..<(total / Int64(chunk.readableBytes)) { try await writer.write(chunk) }
            }
            var request = URLRequest(url: server.sessionURL("/upload"))
            request.httpMethod = "POST"
            let recorder = CompletionRecorder()
            let task = URLSessionManager().uploadTask(withStreamedRequest: request, body: body, completionHandler: recorder.handler)
            task.resume()
            try await eventually { task.countOfBytesSent > 0 }
            task.suspend()
            // Writes already handed to the socket may still be counted; after that, nothing.
            // (Settled = unchanged for a whole second: in a full parallel run the buffered writes
            // can stall for more than the default 300 ms and then go out, which is not a resend.)
            let atSuspend = try await settled(interval: .seconds(1)) { task.countOfBytesSent }
            try await Task.sleep(for: .seconds(1))
            #expect(task.countOfBytesSent == atSuspend)
            #expect(atSuspend < total)
            task.resume()
            await recorder.wait()
            #expect(recorder.first?.error == nil)
            #expect(task.countOfBytesSent == total)
            #expect((recorder.first?.object as? JSONValue)?["bytes"] == .int(total))
        }
    }

    @Test func manyTasksAllCompleteAndTheMapEmpties() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let completions = Mutex<[Int: Int]>([:])
            manager.setTaskDidCompleteBlock { task, _ in completions.withLock { $0[task.taskIdentifier, default: 0] += 1 } }
            let count = 10_000
            let completed = try await withThrowingTaskGroup(of: Int.self) { group in
                var total = 0
                for index in 0..<count {
                    if index >= 64, let done = try await group.next() { total += done }
                    let url = server.sessionURL("/get?i=\(index)")
                    group.addTask {
                        let (_, response) = try await manager.data(for: URLRequest(url: url))
                        return response.statusCode == 200 ? 1 : 0
                    }
                }
                for try await done in group { total += done }
                return total
            }
            #expect(completed == count)
            #expect(manager.tasks.isEmpty)
            // The did-complete block runs right after each completion handler (AFN's order).
            try await eventually { completions.withLock { $0.count } == count }
            let perTask = completions.withLock { $0 }
            #expect(perTask.count == count)
            #expect(perTask.values.allSatisfy { $0 == 1 })
        }
    }

    @Test func invalidateCancelsRunningTasks() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let recorder = CompletionRecorder()
            let invalidated = Mutex(false)
            manager.setSessionDidBecomeInvalidBlock { _, _ in invalidated.withLock { $0 = true } }
            manager.dataTask(with: URLRequest(url: server.sessionURL("/fault/no-response")), completionHandler: recorder.handler)
                .resume()
            try await Task.sleep(for: .milliseconds(200))
            manager.invalidateSessionCancelingTasks(true, resetSession: false)
            await recorder.wait()
            guard case .cancelled = recorder.first?.error as? CourierError else {
                Issue.record("expected cancelled, got \(String(describing: recorder.first?.error))")
                return
            }
            for _ in 0..<100 where !invalidated.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(invalidated.withLock { $0 })
        }
    }
}
