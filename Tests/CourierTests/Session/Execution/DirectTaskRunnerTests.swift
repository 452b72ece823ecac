@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// An awaited data task (the typed verbs, `data(for: HTTPRequest)`,
/// `response(for:serializer:)`) runs on ``DirectTaskRunner`` when the manager has nothing a
/// ``TaskDelegate`` is needed for. What a user sees must not change: the task list, its
/// controls, both notifications, redirects, cookies, limits and errors.
@Suite("direct task runner")
struct DirectTaskRunnerTests {
    /// The notifications posted for one manager's tasks, as `resume`, `suspend` or
    /// `complete:key,key` (the last part of each name and userInfo key; the keys sorted).
    final class NotificationLog: @unchecked Sendable {
        private let entries = Mutex<[String]>([])
        /// Written in `init` only.
        private var observers: [any NSObjectProtocol] = []

        init(for manager: URLSessionManager) {
            let tag = manager.managerTag
            for name in [Notification.Name.courierTaskDidResume, .courierTaskDidSuspend, .courierTaskDidComplete] {
                let observer = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [weak self] note in
                    guard let task = note.object as? SessionTask, task.taskDescription == tag else { return }
                    func short(_ name: String) -> String { name.components(separatedBy: ".").last ?? name }
                    let keys = (note.userInfo ?? [:]).keys.compactMap { $0 as? String }.map(short).sorted()
                    let entry = keys.isEmpty ? short(name.rawValue) : short(name.rawValue) + ":" + keys.joined(separator: ",")
                    self?.entries.withLock { $0.append(entry) }
                }
                observers.append(observer)
            }
        }

        var values: [String] { entries.withLock { $0 } }

        func stop() {
            for observer in observers { NotificationCenter.default.removeObserver(observer) }
        }
    }

    /// Runs `request` as the typed API does and returns what drove its task.
    private func driver(of manager: URLSessionManager, _ request: URLRequest) async throws -> String {
        let seen = Mutex<String>("none")
        _ = try await manager.runKeepingEngineHead(request, registered: { task in
            seen.withLock { $0 = task.delegate.map { "\(type(of: $0))" } ?? "none" }
        })
        return seen.withLock { $0 }
    }

    struct NoOpMonitor: SessionEventMonitor {}

    private func expectCancelled(sourceLocation: SourceLocation = #_sourceLocation, _ call: () async throws -> Void) async {
        do {
            try await call()
            Issue.record("the call succeeded", sourceLocation: sourceLocation)
        } catch CourierError.cancelled {
        } catch {
            Issue.record("expected cancelled, got \(error)", sourceLocation: sourceLocation)
        }
    }
    struct PassThrough: RequestInterceptor {}

    @Test("nothing configured: the direct runner; anything a TaskDelegate serves: the delegate")
    func whichDriverRunsTheTask() async throws {
        try await TestServer.withRunning { server in
            let request = URLRequest(url: server.baseURL.appendingPathComponent("get"))
            #expect(try await driver(of: URLSessionManager(), request) == "DirectTaskRunner")

            let completionBlock = URLSessionManager()
            completionBlock.setTaskDidCompleteBlock { _, _ in }  // runs at the end, as before: still direct
            #expect(try await driver(of: completionBlock, request) == "DirectTaskRunner")

            let monitored = URLSessionManager()
            monitored.addEventMonitor(NoOpMonitor())
            let intercepted = URLSessionManager()
            intercepted.interceptor = PassThrough()
            let credentialed = URLSessionManager()
            credentialed.credential = URLCredential(user: "u", password: "p", persistence: .none)
            let hooked = URLSessionManager()
            hooked.setDataTaskDidReceiveDataBlock { _, _ in }
            var cached = SessionConfiguration()
            cached.cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil)
            var observed = SessionConfiguration()
            observed.observability = SessionObservability(logger: LogRecorder().logger)
            for manager in [monitored, intercepted, credentialed, hooked, URLSessionManager(configuration: cached), URLSessionManager(configuration: observed)] {
                #expect(try await driver(of: manager, request) == "TaskDelegate")
            }
            // The decision follows the manager's settings at the call:
            let cleared = URLSessionManager()
            cleared.interceptor = PassThrough()
            cleared.interceptor = nil
            #expect(try await driver(of: cleared, request) == "DirectTaskRunner", "an interceptor set and removed")
            let perCall = Mutex<String>("none")
            _ = try await URLSessionManager().runKeepingEngineHead(request, interceptor: PassThrough(), registered: { task in
                perCall.withLock { $0 = task.delegate.map { "\(type(of: $0))" } ?? "none" }
            })
            #expect(perCall.withLock { $0 } == "TaskDelegate")
        }
    }

    @Test("the task is listed while it runs; suspend and resume from the list pause it; every notification is posted")
    func suspendAndResumeFromTheTaskList() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let log = NotificationLog(for: manager)
            defer { log.stop() }
            let request = DirectTaskRunnerParityTests.drip(server, seconds: "1")
            let waiting = Task { try await manager.runKeepingEngineHead(request) }
            try await eventually { manager.tasks.first?.state == .running && server.requestsReceived(forPath: "/drip") == 1 }
            let task = try #require(manager.tasks.first as? DataTask)
            #expect(task.delegate is DirectTaskRunner)
            task.suspend()
            #expect(task.state == .suspended)
            try await Task.sleep(for: .milliseconds(1500))  // the drip is over by now: its bytes wait in the socket
            #expect(task.state == .suspended)
            #expect(task.countOfBytesReceived < 4)
            task.resume()
            let outcome = try await waiting.value
            #expect(outcome.data == Data("****".utf8))
            #expect(outcome.head.status.code == 200)
            #expect(manager.tasks.isEmpty)
            #expect(task.state == .completed)
            #expect(task.response?.statusCode == 200)
            #expect(task.countOfBytesReceived == 4)
            #expect(task.metrics != nil)
            try await eventually { log.values.count == 4 }
            #expect(
                log.values == [
                    "resume", "suspend", "resume", "complete:responsedata,responseserializer,serializedresponse,sessiontaskmetrics",
                ])
        }
    }

    @Test("cancel from the task list ends the call with cancelled, posts the completion with its error, and leaves the list")
    func cancelFromTheTaskList() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let log = NotificationLog(for: manager)
            defer { log.stop() }
            let request = URLRequest(url: server.baseURL.appendingPathComponent("fault/no-response"))
            let waiting = Task { try await manager.runKeepingEngineHead(request) }
            try await eventually { server.requestsReceived(forPath: "/fault/no-response") == 1 }
            let task = try #require(manager.tasks.first)
            task.cancel()
            await expectCancelled { _ = try await waiting.value }
            #expect(manager.tasks.isEmpty)
            #expect(task.state == .completed)
            if case .cancelled(let url) = task.error as? CourierError { #expect(url == request.url) } else { Issue.record("\(String(describing: task.error))") }
            try await eventually { ClientSocketProbe.sockets(toPort: server.port) == 0 }
            try await eventually { log.values.count == 2 }
            #expect(log.values == ["resume", "complete:error,responsedata,responseserializer,sessiontaskmetrics"])
        }
    }

    @Test("the completion notification carries the same keys as a TaskDelegate's, on success, on a status error and on failure")
    func notificationsMatchTheDelegates() async throws {
        try await TestServer.withRunning { server in
            let direct = URLSessionManager()
            let delegated = URLSessionManager()
            delegated.addEventMonitor(NoOpMonitor())
            let requests = [
                URLRequest(url: server.baseURL.appendingPathComponent("get")),
                URLRequest(url: server.baseURL.appendingPathComponent("status/500")),
                URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/refused"))),
            ]
            for request in requests {
                var seen: [[String]] = []
                for manager in [direct, delegated] {
                    let log = NotificationLog(for: manager)
                    _ = try? await manager.runKeepingEngineHead(request)
                    try await eventually { log.values.count == 2 }
                    log.stop()
                    seen.append(log.values)
                }
                #expect(seen[0] == seen[1], "\(request.url?.absoluteString ?? "")")
            }
        }
    }

    @Test("redirects: followed up to the limit, 307 resends the body, 303 drops it, cookies of a redirect are kept")
    func redirectsAndCookies() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.maximumRedirects = 2
            configuration.cookieJar = HTTPCookieJar()
            let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
            let followed = try await manager.runKeepingEngineHead(URLRequest(url: server.baseURL.appendingPathComponent("redirect/2")))
            #expect(followed.url.path == "/get")
            #expect(followed.head.status.code == 200)
            let tooMany = URLRequest(url: server.baseURL.appendingPathComponent("redirect/3"))
            await #expect(throws: CourierError.self) { try await manager.runKeepingEngineHead(tooMany) }
            do {
                _ = try await manager.runKeepingEngineHead(tooMany)
            } catch let error as CourierError {
                guard case .tooManyRedirects(_, let limit) = error else {
                    Issue.record("expected tooManyRedirects, got \(error)")
                    return
                }
                #expect(limit == 2)
            }

            for (status, method, body) in [(307, "POST", "payload"), (303, "GET", "")] {
                var components = try #require(URLComponents(url: server.baseURL.appendingPathComponent("redirect-to"), resolvingAgainstBaseURL: false))
                components.queryItems = [URLQueryItem(name: "url", value: "/anything"), URLQueryItem(name: "status_code", value: "\(status)")]
                var post = URLRequest(url: try #require(components.url))
                post.httpMethod = "POST"
                post.httpBody = Data("payload".utf8)
                let outcome = try await manager.runKeepingEngineHead(post)
                let echo = try #require(try JSONSerialization.jsonObject(with: outcome.data) as? [String: Any])
                #expect(echo["method"] as? String == method, "\(status)")
                #expect(echo["data"] as? String == body, "\(status)")
            }

            let cookies = try await manager.runKeepingEngineHead(URLRequest(url: server.baseURL.appendingPathComponent("cookies/set/flavour/ginger")))
            let echo = try #require(try JSONSerialization.jsonObject(with: cookies.data) as? [String: Any])
            #expect((echo["cookies"] as? [String: String]) == ["flavour": "ginger"])
        }
    }

    @Test("a body over maximumResponseBodySize fails, declared or not; an invalidated manager refuses the call")
    func limitsAndInvalidation() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.maximumResponseBodySize = 1000
            let manager = URLSessionManager(configuration: configuration)
            let declared = URLRequest(url: server.baseURL.appendingPathComponent("bytes/2000"))
            let chunked = URLRequest(url: server.baseURL.appendingPathComponent("stream-bytes/2000"))
            for (request, isDeclared) in [(declared, true), (chunked, false)] {
                do {
                    _ = try await manager.runKeepingEngineHead(request)
                    Issue.record("a body over the limit was delivered")
                } catch CourierError.responseBodyTooLarge(_, let limit, let contentLength, let received) {
                    #expect(limit == 1000)
                    #expect(isDeclared ? contentLength == 2000 && received == 0 : contentLength == nil && received > 1000)
                }
            }
            #expect(manager.tasks.isEmpty)
            await manager.invalidateSession(cancelingTasks: true)
            let refused = URLRequest(url: server.baseURL.appendingPathComponent("get"))
            await expectCancelled { _ = try await manager.runKeepingEngineHead(refused) }
            #expect(manager.tasks.isEmpty)
            #expect(server.requestsReceived(forPath: "/get") == 0)
        }
    }
}
