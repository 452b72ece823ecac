@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// The same awaited call, run once by ``DirectTaskRunner`` (a bare manager) and once by a
/// ``TaskDelegate`` (the same manager shape with an event monitor): everything a user can
/// read of the task and its notifications must be the same, including while it runs, against
/// hostile servers, when cancelled, and when the session is invalidated or renewed under it.
@Suite("direct task runner parity with TaskDelegate")
struct DirectTaskRunnerParityTests {
    struct NoOpMonitor: SessionEventMonitor {}

    /// What a user can read of one call and its task.
    struct Observed: Equatable, CustomStringConvertible {
        /// `status N` or the error's case name.
        var outcome: String
        /// The task's response status read while the call ran (by `during`), if read.
        var midFlightStatus: Int?
        var state: SessionTask.State
        var responseStatus: Int?
        var received: Int64?
        var expected: Int64
        var notifications: [String]
        var listedAfter: Int
        /// What `during` recorded.
        var note: String

        var description: String {
            "\(outcome) mid=\(midFlightStatus.map(String.init) ?? "nil") state=\(state) response=\(responseStatus.map(String.init) ?? "nil") "
                + "received=\(received.map(String.init) ?? "-") expected=\(expected) listed=\(listedAfter) note=\(note) \(notifications)"
        }
    }

    static func caseName(_ error: any Error) -> String {
        guard let courier = error as? CourierError else { return "\(type(of: error))" }
        return Mirror(reflecting: courier).children.first?.label ?? "\(courier)"
    }

    /// Makes a manager run by the direct runner (`direct`) or by a delegate.
    static func manager(direct: Bool, configuration: SessionConfiguration = SessionConfiguration()) -> URLSessionManager {
        let manager = URLSessionManager(configuration: configuration)
        if !direct { manager.addEventMonitor(NoOpMonitor()) }
        return manager
    }

    /// Runs `request` as the typed API does on `manager`; `during` gets the task once it is
    /// listed (and returns a note); `countsReceived`: include the received count.
    static func observe(
        _ manager: URLSessionManager, _ request: URLRequest, direct: Bool, countsReceived: Bool = true,
        during: (@Sendable (DataTask, URLSessionManager) async throws -> String)? = nil
    ) async throws -> Observed {
        let log = DirectTaskRunnerTests.NotificationLog(for: manager)
        defer { log.stop() }
        let made = Mutex<DataTask?>(nil)
        let call = Task { try await manager.runKeepingEngineHead(request, registered: { task in made.withLock { $0 = task } }) }
        var note = ""
        let midFlight = Mutex<Int?>(nil)
        if let during {
            try await eventually { made.withLock { $0 } != nil }
            let task = try #require(made.withLock { $0 })
            #expect((task.delegate is DirectTaskRunner) == direct, "the call ran on the driver the test is about")
            note = try await during(task, manager)
        }
        let result = await call.result
        let task = try #require(made.withLock { $0 })
        try await eventually { log.values.contains { $0.hasPrefix("complete") } }
        if note.hasPrefix("status ") { midFlight.withLock { $0 = Int(note.dropFirst(7)) } }
        let outcome: String
        switch result {
        case .success(let value): outcome = "status \(value.head.status.code) body \(value.data.count)"
        case .failure(let error): outcome = caseName(error)
        }
        return Observed(
            outcome: outcome, midFlightStatus: midFlight.withLock { $0 }, state: task.state,
            responseStatus: task.response?.statusCode, received: countsReceived ? task.countOfBytesReceived : nil,
            expected: task.countOfBytesExpectedToReceive, notifications: log.values, listedAfter: manager.tasks.count, note: note)
    }

    /// Observes `request` (made again for each manager: a body stream is read once) on a
    /// direct and on a delegated manager and expects the same.
    /// `/drip`: four bytes over `seconds`.
    static func drip(_ server: TestServer, seconds: String) -> URLRequest {
        URLRequest(
            url: server.baseURL.appendingPathComponent("drip").appending(queryItems: [
                URLQueryItem(name: "duration", value: seconds), URLQueryItem(name: "numbytes", value: "4"),
            ]))
    }

    static func expectParity(
        _ request: @autoclosure () throws -> URLRequest, configuration: SessionConfiguration = SessionConfiguration(), countsReceived: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation,
        during: (@Sendable (DataTask, URLSessionManager) async throws -> String)? = nil
    ) async throws -> Observed {
        let direct = try await observe(
            manager(direct: true, configuration: configuration), try request(), direct: true, countsReceived: countsReceived, during: during)
        let delegated = try await observe(
            manager(direct: false, configuration: configuration), try request(), direct: false, countsReceived: countsReceived,
            during: during)
        let name = try request().url?.absoluteString ?? ""
        #expect(direct == delegated, "\(name)", sourceLocation: sourceLocation)
        return delegated
    }

    @Test("while the body comes in, task.response is the head already; cancel from the list then ends it the same way")
    func responseWhileTheBodyRuns() async throws {
        try await TestServer.withRunning { server in
            let request = URLRequest(url: server.baseURL.appendingPathComponent("fault/stall-body/10"))
            let seen = try await Self.expectParity(request) { task, _ in
                try await eventually { task.countOfBytesReceived == 10 }
                let status = task.response?.statusCode
                task.cancel()
                return status.map { "status \($0)" } ?? "no response"
            }
            #expect(seen.midFlightStatus == 200)
            #expect(seen.outcome == "cancelled")
        }
    }

    @Test("suspended from the list after the head, then cancelled from it: the same end")
    func suspendedThenCancelled() async throws {
        try await TestServer.withRunning { server in
            let request = URLRequest(url: server.baseURL.appendingPathComponent("fault/stall-body/10"))
            let seen = try await Self.expectParity(request) { task, _ in
                try await eventually { task.countOfBytesReceived == 10 }
                task.suspend()
                let suspended = task.state
                task.cancel()
                return "\(suspended)"
            }
            #expect(seen.outcome == "cancelled")
            #expect(seen.note == "\(SessionTask.State.suspended)")
        }
    }

    @Test("AFNetworking's awaited shape (data(for:) with the manager's JSON serializer): the same result and completion notification")
    func awaitedAFNetworkingShape() async throws {
        try await TestServer.withRunning { server in
            for path in ["json", "status/500", "html", "redirect/2", "fault/redirect-loop"] {
                var seen: [String] = []
                for direct in [true, false] {
                    let manager = HTTPSessionManager(baseURL: server.baseURL)
                    if !direct { manager.addEventMonitor(NoOpMonitor()) }
                    let log = DirectTaskRunnerTests.NotificationLog(for: manager)
                    let completed = Mutex<String>("")
                    let observer = NotificationCenter.default.addObserver(forName: .courierTaskDidComplete, object: nil, queue: nil) { note in
                        guard let task = note.object as? SessionTask, task.taskDescription == manager.managerTag else { return }
                        completed.withLock {
                            $0 = "state \(task.state) response \(task.response?.statusCode ?? 0) at \(task.response?.url?.path ?? "-") "
                                + "received \(task.countOfBytesReceived) object \(note.userInfo?[SessionNotificationKey.serializedResponse] != nil)"
                        }
                    }
                    var outcome: String
                    do {
                        let (object, response) = try await manager.data(for: URLRequest(url: server.baseURL.appendingPathComponent(path)))
                        outcome = "status \(response.statusCode) object \(object != nil)"
                    } catch {
                        outcome = Self.caseName(error)
                    }
                    try await eventually { log.values.contains { $0.hasPrefix("complete") } }
                    NotificationCenter.default.removeObserver(observer)
                    log.stop()
                    seen.append("\(outcome) | \(completed.withLock { $0 }) | \(log.values)")
                    #expect(manager.tasks.isEmpty)
                }
                #expect(seen[0] == seen[1], "\(path)")
            }
        }
    }

    @Test("a chunked body over the limit: the task counts what arrived, as the error says")
    func countsOfABodyOverTheLimit() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.maximumResponseBodySize = 1000
            let request = URLRequest(url: server.baseURL.appendingPathComponent("stream-bytes/5000").appending(queryItems: [URLQueryItem(name: "chunk_size", value: "300")]))
            for direct in [true, false] {
                let manager = Self.manager(direct: direct, configuration: configuration)
                let made = Mutex<DataTask?>(nil)
                do {
                    _ = try await manager.runKeepingEngineHead(request, registered: { task in made.withLock { $0 = task } })
                    Issue.record("a body over the limit was delivered")
                } catch CourierError.responseBodyTooLarge(_, let limit, _, let received) {
                    let task = try #require(made.withLock { $0 })
                    #expect(limit == 1000)
                    #expect(received > 1000)
                    #expect(task.countOfBytesReceived == received, "direct: \(direct)")
                }
            }
        }
    }

    @Test("hostile servers: a 401 with a challenge, a reset after the head, a short body, bad chunking, a garbage Location, a loop, a 307 of a stream")
    func hostileServers() async throws {
        try await TestServer.withRunning { server in
            let base = server.baseURL
            func url(_ path: String, _ query: [String: String] = [:]) throws -> URL {
                var components = try #require(URLComponents(url: base.appendingPathComponent(path), resolvingAgainstBaseURL: false))
                if !query.isEmpty { components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } }
                return try #require(components.url)
            }
            let challenged = try await Self.expectParity(URLRequest(url: try url("basic-auth/u/p")))
            #expect(challenged.outcome.hasPrefix("status 401"))
            let reset = try await Self.expectParity(
                URLRequest(url: try url("fault/reset-mid-body", ["length": "100000", "sent": "1000"])), countsReceived: false)
            #expect(reset.responseStatus == 200)
            _ = try await Self.expectParity(URLRequest(url: try url("fault/short-body", ["length": "1000", "sent": "500"])))
            _ = try await Self.expectParity(URLRequest(url: try url("fault/bad-chunked")), countsReceived: false)
            let garbage = try await Self.expectParity(URLRequest(url: try url("redirect-to", ["url": "http://[::1", "status_code": "302"])))
            #expect(garbage.outcome.hasPrefix("status 302"))
            let loop = try await Self.expectParity(URLRequest(url: try url("fault/redirect-loop")))
            #expect(loop.outcome == "tooManyRedirects")
            let redirect307 = try url("redirect-to", ["url": "/anything", "status_code": "307"])
            func streamed() -> URLRequest {
                var request = URLRequest(url: redirect307)
                request.httpMethod = "POST"
                request.httpBodyStream = InputStream(data: Data("payload".utf8))
                return request
            }
            let notReplayable = try await Self.expectParity(streamed())
            #expect(notReplayable.outcome == "requestBodyNotReplayable")
        }
    }

    @Test("a redirect to another origin drops Authorization and Cookie and keeps the rest; to the same origin it keeps them")
    func crossOriginRedirect() async throws {
        try await TestServer.withRunning { origin in
            try await TestServer.withRunning { other in
                var seen: [String] = []
                for direct in [true, false] {
                    var echoes: [String] = []
                    for target in [other.baseURL, origin.baseURL] {
                        let destination = target.appendingPathComponent("headers").absoluteString
                        var request = URLRequest(
                            url: origin.baseURL.appendingPathComponent("redirect-to").appending(queryItems: [URLQueryItem(name: "url", value: destination)]))
                        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
                        request.setValue("session=1", forHTTPHeaderField: "Cookie")
                        request.setValue("kept", forHTTPHeaderField: "X-Kept")
                        let made = Mutex<DataTask?>(nil)
                        let outcome = try await Self.manager(direct: direct).runKeepingEngineHead(request, registered: { task in made.withLock { $0 = task } })
                        #expect((made.withLock { $0 }?.delegate == nil), "the task ended")
                        let echo = try #require(try JSONSerialization.jsonObject(with: outcome.data) as? [String: Any])
                        let headers = try #require(echo["headers"] as? [String: Any])
                        let names = Set(headers.keys.map { $0.lowercased() }).intersection(["authorization", "cookie", "x-kept"])
                        echoes.append("\(outcome.url.port ?? 0 == target.port ? "arrived" : "elsewhere") \(names.sorted())")
                    }
                    seen.append(echoes.joined(separator: " | "))
                }
                #expect(seen[0] == seen[1])
                #expect(seen[1] == "arrived [\"x-kept\"] | arrived [\"authorization\", \"cookie\", \"x-kept\"]")
            }
        }
    }

    @Test("progressUpdates of a listed task ends at the body's size when the task ends")
    func progressUpdates() async throws {
        try await TestServer.withRunning { server in
            let request = Self.drip(server, seconds: "0.5")
            let seen = try await Self.expectParity(request) { task, _ in
                // Which values a subscriber sees first depends on when it subscribes; the last does not.
                var last: TransferProgress?
                for await progress in task.progressUpdates(.download) { last = progress }
                return "last \(last?.completedUnitCount ?? -2)/\(last?.totalUnitCount ?? -2)"
            }
            #expect(seen.note == "last 4/4")
        }
    }

    /// A direct task makes its progress only when asked: asked mid-transfer it starts from the
    /// task's counts (bytes so far, the announced total), and it still ends with the task.
    @Test("progress asked for mid-transfer starts at the bytes so far and the total, and ends with the task")
    func progressAskedForMidTransfer() async throws {
        try await TestServer.withRunning { server in
            let request = URLRequest(url: server.baseURL.appendingPathComponent("fault/stall-body/10"))
            let seen = try await Self.expectParity(request) { task, manager in
                try await eventually { task.countOfBytesReceived == 10 }
                let object = manager.downloadProgress(for: task)
                let upload = manager.uploadProgress(for: task)
                let updates = task.progressUpdates(.download)
                task.cancel()
                var values: [String] = []
                for await value in updates { values.append("\(value.completedUnitCount)/\(value.totalUnitCount)") }
                return "download \(object?.completedUnitCount ?? -2)/\(object?.totalUnitCount ?? -2) "
                    + "upload \(upload?.completedUnitCount ?? -2)/\(upload?.totalUnitCount ?? -2) \(values)"
            }
            #expect(seen.note == "download 10/21 upload 0/-1 [\"10/21\"]")
        }
    }

    @Test("cancel or suspend from the task list before the first exchange: the same end")
    func controlsBeforeTheFirstExchange() async throws {
        try await TestServer.withRunning { server in
            let request = URLRequest(url: server.baseURL.appendingPathComponent("get"))
            for control in ["cancel", "suspend"] {
                var seen: [String] = []
                for direct in [true, false] {
                    let manager = Self.manager(direct: direct)
                    let log = DirectTaskRunnerTests.NotificationLog(for: manager)
                    defer { log.stop() }
                    let made = Mutex<DataTask?>(nil)
                    let outcome: String
                    do {
                        let value = try await manager.runKeepingEngineHead(request, registered: { task in
                            made.withLock { $0 = task }
                            // Listed, not started yet: what a user reaching it through manager.tasks can do.
                            if control == "cancel" { task.cancel() } else { task.suspend() }
                        })
                        outcome = "status \(value.head.status.code)"
                    } catch {
                        outcome = Self.caseName(error)
                    }
                    try await eventually { log.values.contains { $0.hasPrefix("complete") } }
                    let task = try #require(made.withLock { $0 })
                    seen.append("\(outcome) \(task.state) listed \(manager.tasks.count) \(log.values)")
                }
                #expect(seen[0] == seen[1], "\(control)")
                #expect(seen[1].hasPrefix(control == "cancel" ? "cancelled completed listed 0" : "status 200 completed listed 0"))
            }
        }
    }

    @Test("cancelling the awaiting Swift task while the request waits for its answer")
    func swiftTaskCancelledInFlight() async throws {
        try await TestServer.withRunning { server in
            let request = URLRequest(url: server.baseURL.appendingPathComponent("fault/no-response"))
            for direct in [true, false] {
                let manager = Self.manager(direct: direct)
                let made = Mutex<DataTask?>(nil)
                let before = server.requestsReceived(forPath: "/fault/no-response")
                let call = Task { try await manager.runKeepingEngineHead(request, registered: { task in made.withLock { $0 = task } }) }
                try await eventually { server.requestsReceived(forPath: "/fault/no-response") == before + 1 }
                call.cancel()
                // Bounded: a cancellation that never reaches the task fails the test instead of hanging it.
                try await eventually(within: 30) { made.withLock { $0 }?.state == .completed }
                made.withLock { $0 }?.cancel()
                let result = await call.result
                if case .failure(let error) = result { #expect(Self.caseName(error) == "cancelled") } else { Issue.record("succeeded") }
                let task = try #require(made.withLock { $0 })
                #expect(task.state == .completed)
                #expect(manager.tasks.isEmpty)
                if case .cancelled(let url) = task.error as? CourierError { #expect(url == request.url) } else { Issue.record("\(String(describing: task.error))") }
            }
        }
    }

    @Test("a call whose Swift task is already cancelled: cancelled, with the same notifications (resumed, then completed with metrics)")
    func swiftTaskCancelledBeforeTheCall() async throws {
        try await TestServer.withRunning { server in
            let request = URLRequest(url: server.baseURL.appendingPathComponent("get"))
            var seen: [String] = []
            for direct in [true, false] {
                let manager = Self.manager(direct: direct)
                let log = DirectTaskRunnerTests.NotificationLog(for: manager)
                defer { log.stop() }
                let made = Mutex<DataTask?>(nil)
                let call = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await manager.runKeepingEngineHead(request, registered: { task in made.withLock { $0 = task } })
                }
                let outcome: String
                switch await call.result {
                case .success: outcome = "succeeded"
                case .failure(let error): outcome = Self.caseName(error)
                }
                try await eventually { log.values.contains { $0.hasPrefix("complete") } }
                let task = try #require(made.withLock { $0 })
                seen.append("\(outcome) \(task.state) listed \(manager.tasks.count) \(log.values)")
            }
            #expect(seen[0] == seen[1])
            #expect(seen[1].hasPrefix("cancelled"))
        }
    }

    @Test("invalidating without cancelling waits for the running call, with cancelling ends it; a new security policy lets it finish")
    func invalidationAndRenewalWaitForTheCall() async throws {
        try await TestServer.withRunning { server in
            let request = Self.drip(server, seconds: "1")
            let invalidated = try await Self.expectParity(request) { task, manager in
                try await eventually { task.countOfBytesExpectedToReceive == 4 }
                await manager.invalidateSession(cancelingTasks: false)
                return "after invalidation: \(task.state) listed \(manager.tasks.count) received \(task.countOfBytesReceived)"
            }
            #expect(invalidated.outcome == "status 200 body 4")
            #expect(invalidated.note == "after invalidation: completed listed 0 received 4")
            let renewed = try await Self.expectParity(request) { task, manager in
                try await eventually { task.countOfBytesExpectedToReceive == 4 }
                try manager.setSecurityPolicy(.default)
                return "renewed"
            }
            #expect(renewed.outcome == "status 200 body 4")
            let stalled = URLRequest(url: server.baseURL.appendingPathComponent("fault/stall-body/10"))
            let cancelling = try await Self.expectParity(stalled) { task, manager in
                try await eventually { task.countOfBytesReceived == 10 }
                await manager.invalidateSession(cancelingTasks: true)
                return "after invalidation: \(task.state) listed \(manager.tasks.count)"
            }
            #expect(cancelling.outcome == "cancelled")
            #expect(cancelling.note == "after invalidation: completed listed 0")
        }
    }
}
