@testable import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// Records every task event and exchange, with whether two ever overlapped and whether any
/// arrived on an event loop.
final class TaskEventRecorder: SessionEventMonitor {
    struct Seen: Sendable {
        var task: Int
        var event: TaskEvent
    }
    private let state = Mutex<(events: [Seen], exchanges: [TaskExchange], onLoop: Int, inside: Int, overlapped: Bool)>(([], [], 0, 0, false))

    func task(_ task: SessionTask, didReceive event: TaskEvent) {
        state.withLock { state in
            state.inside += 1
            if state.inside > 1 { state.overlapped = true }
            if MultiThreadedEventLoopGroup.currentEventLoop != nil { state.onLoop += 1 }
        }
        state.withLock { state in
            state.events.append(Seen(task: task.taskIdentifier, event: event))
            state.inside -= 1
        }
    }

    func task(_ task: SessionTask, didFinishExchange exchange: TaskExchange) {
        state.withLock { $0.exchanges.append(exchange) }
    }

    var events: [TaskEvent] { state.withLock { $0.events.map(\.event) } }
    var names: [String] { events.map(\.kind.name) }
    var exchanges: [TaskExchange] { state.withLock { $0.exchanges } }
    var arrivedOnAnEventLoop: Int { state.withLock { $0.onLoop } }
    var overlapped: Bool { state.withLock { $0.overlapped } }
    func decisions() -> [TaskEvent.Decision] {
        events.compactMap { if case .decision(let decision) = $0.kind { decision } else { nil } }
    }
}

@Suite("Task events on a session")
struct TaskEventSessionTests {
    private static func manager(_ server: TestServer, _ recorder: TaskEventRecorder) -> HTTPSessionManager {
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        manager.addEventMonitor(recorder)
        return manager
    }

    @Test func aGETReportsEveryPhaseInOrderOffTheEventLoopThenReusesItsConnection() async throws {
        try await TestServer.withRunning { server in
            let recorder = TaskEventRecorder()
            let manager = Self.manager(server, recorder)
            var request = URLRequest(url: server.baseURL.appending(path: "get"))
            request.setValue("events", forHTTPHeaderField: "X-Trace")
            _ = try await manager.data(for: request)
            #expect(
                recorder.names == [
                    "callStart", "connectionWaitStart", "connectStart", "connectAttemptStart", "connectAttemptEnd", "connectEnd",
                    "connectionWaitEnd", "connectionAcquired",
                    "requestHeadersStart", "requestHeadersEnd", "responseHeadersStart", "responseHeadersEnd",
                    "responseBodyStart", "responseBodyEnd", "connectionReleased", "callEnd",
                ], "an IP literal: no name lookup")
            let dates = recorder.events.map(\.date)
            #expect(dates == dates.sorted(), "each event's date is when it happened, in order")
            #expect(recorder.arrivedOnAnEventLoop == 0)
            #expect(!recorder.overlapped)
            let exchange = try #require(recorder.exchanges.first)
            #expect(exchange.statusCode == 200)
            #expect(exchange.method == "GET")
            #expect(exchange.requestHeaders.contains { $0.name == "X-Trace" && $0.value == "events" })

            _ = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "get")))
            let second = recorder.events.suffix(from: 16)
            let acquired = second.compactMap { if case .connectionAcquired(let connection) = $0.kind { connection } else { nil } }
            #expect(acquired.map(\.isReused) == [true])
            #expect(!second.contains { $0.kind.phase == .connect }, "a reused connection has no setup")
        }
    }

    @Test func aDomainNameIsLookedUpAndABodyIsSent() async throws {
        try await TestServer.withRunning { server in
            let recorder = TaskEventRecorder()
            let manager = URLSessionManager()
            manager.addEventMonitor(recorder)
            var request = URLRequest(url: try #require(URL(string: "http://localhost:\(server.port)/post")))
            request.httpMethod = "POST"
            request.httpBody = Data("hello".utf8)
            _ = try await manager.data(for: request)
            let names = recorder.names
            #expect(names.contains("domainLookupStart") && names.contains("domainLookupEnd"))
            // localhost may be ::1 and 127.0.0.1: Happy Eyeballs' attempts, the last one connected.
            let attempts = try #require(recorder.exchanges.first?.metrics.connectAttempts)
            #expect(!attempts.isEmpty)
            #expect(attempts.last { $0.error == nil }?.address == recorder.exchanges.first?.metrics.remoteAddress)
            #expect(names.filter { $0 == "connectAttemptStart" }.count == attempts.count)
            let bodyStart = try #require(names.firstIndex(of: "requestBodyStart"))
            let bodyEnd = try #require(names.firstIndex(of: "requestBodyEnd"))
            let headStart = try #require(names.firstIndex(of: "responseHeadersStart"))
            #expect(bodyStart < bodyEnd && bodyEnd < headStart)
            #expect(recorder.exchanges.first?.metrics.requestBodyBytesSent == 5)
        }
    }

    @Test func redirectsAreDecisionsAndEachHopIsAnExchange() async throws {
        try await TestServer.withRunning { server in
            let recorder = TaskEventRecorder()
            let manager = Self.manager(server, recorder)
            _ = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "redirect/2")))
            let followed = recorder.decisions().filter { if case .redirectFollowed = $0 { true } else { false } }
            #expect(followed.count == 2)
            #expect(recorder.exchanges.map(\.hop) == [0, 1, 2])
            #expect(recorder.exchanges.map(\.statusCode) == [302, 302, 200])
            #expect(Set(recorder.events.map(\.hop)) == [0, 1, 2])
            #expect(recorder.names.filter { $0 == "connectionAcquired" }.count == 3)
            #expect(recorder.names.last == "callEnd")

            let refused = TaskEventRecorder()
            var configuration = SessionConfiguration()
            configuration.maximumRedirects = 0
            let strict = URLSessionManager(configuration: configuration)
            strict.addEventMonitor(refused)
            _ = try? await strict.data(for: URLRequest(url: server.baseURL.appending(path: "redirect/1")))  // the 302 is the answer
            #expect(refused.decisions() == [.redirectRefused(statusCode: 302, reason: "following redirects is turned off")])
        }
    }

    @Test func retriesAreDecidedThenDeclinedAndTheCallFails() async throws {
        try await TestServer.withRunning { server in
            let recorder = TaskEventRecorder()
            let manager = Self.manager(server, recorder)
            manager.interceptor = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01)
            await #expect(throws: (any Error).self) {
                _ = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "status/503")))
            }
            let kinds = recorder.decisions().map(\.name)
            #expect(kinds == ["retryDecided", "retryDeclined"])
            #expect(recorder.exchanges.map(\.statusCode) == [503, 503])
            #expect(recorder.names.last == "callFailed")
            let decided = try #require(recorder.names.firstIndex(of: "retryDecided"))
            let secondAcquired = try #require(recorder.names.lastIndex(of: "connectionAcquired"))
            #expect(decided < secondAcquired, "the decision comes before the retry's exchange")
        }
    }

    @Test func anAnsweredChallengeIsADecision() async throws {
        try await TestServer.withRunning { server in
            let recorder = TaskEventRecorder()
            let manager = Self.manager(server, recorder)
            manager.credential = URLCredential(user: "user", password: "pass", persistence: .forSession)
            _ = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "basic-auth/user/pass")))
            #expect(recorder.decisions() == [.authenticationAnswered(statusCode: 401, scheme: "Basic")])
            #expect(recorder.exchanges.map(\.statusCode) == [401, 200])
        }
    }

    @Test func theCachesAnswersAreDecisions() async throws {
        try await TestServer.withRunning { server in
            let recorder = TaskEventRecorder()
            var configuration = SessionConfiguration()
            configuration.cache = HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0, directory: nil)
            let manager = URLSessionManager(configuration: configuration)
            manager.addEventMonitor(recorder)
            let url = server.baseURL.appending(path: "cached/events").appending(queryItems: [URLQueryItem(name: "cc", value: "max-age=600")])
            _ = try await manager.data(for: URLRequest(url: url))
            _ = try await manager.data(for: URLRequest(url: url))
            #expect(recorder.decisions() == [.cache(.miss), .cache(.hit)])
            #expect(recorder.exchanges.count == 1, "a hit sends nothing")
            #expect(recorder.names.filter { $0 == "callEnd" }.count == 2)
        }
    }

    @Test func aRefusedConnectionFailsTheConnectPhaseAndTheCall() async throws {
        let recorder = TaskEventRecorder()
        let manager = URLSessionManager()
        manager.addEventMonitor(recorder)
        // Port 1: nothing listens there (a port freed by a stopped server may be taken by
        // another test's server before this connects).
        await #expect(throws: (any Error).self) {
            _ = try await manager.data(for: URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/get"))))
        }
        #expect(recorder.names == ["callStart", "connectionWaitStart", "connectStart", "connectFailed", "connectionWaitFailed", "callFailed"])
        #expect(recorder.exchanges.first?.statusCode == nil)
        #expect(recorder.exchanges.first?.error != nil)
    }

    @Test func noMonitorMeansNoMetricsUpdatesFromTheEngine() async throws {
        // The engine's snapshots are asked for only when a task reports events.
        try await TestServer.withRunning { server in
            let engine = try HTTPEngine()
            var request = EngineRequest(url: server.baseURL.appending(path: "get"))
            let plain = try await engine.collectEvents(request)
            #expect(!plain.contains { if case .metricsUpdated = $0 { true } else { false } })
            request.reportsMetricsUpdates = true
            let reported = try await engine.collectEvents(request)
            let updates = reported.compactMap { if case .metricsUpdated(let metrics) = $0 { metrics } else { nil } }
            // A bodiless HTTP/1 request is sent in one call: the head's snapshot carries its
            // start and end.
            #expect(updates.count == 1, "head")
            #expect(updates.first?.requestStart != nil && updates.first?.requestEnd != nil)
            #expect(updates.last?.responseStart != nil)
            // With a body, the request's start is reported before its body goes out.
            var post = EngineRequest(method: "POST", url: server.baseURL.appending(path: "post"), body: .bytes(ByteBuffer(string: "{}")))
            post.reportsMetricsUpdates = true
            let posted = try await engine.collectEvents(post)
            let postUpdates = posted.compactMap { if case .metricsUpdated(let metrics) = $0 { metrics } else { nil } }
            #expect(postUpdates.count == 3, "acquired, sent, head")
            #expect(postUpdates.first?.requestStart != nil && postUpdates.first?.requestEnd == nil)
            await engine.shutdown()
        }
    }
}

extension HTTPEngine {
    /// Every event of one request, in order.
    fileprivate func collectEvents(_ request: EngineRequest) async throws -> [EngineEvent] {
        let events = Mutex<[EngineEvent]>([])
        let (ended, done) = AsyncStream<Void>.makeStream()
        _ = execute(request) { event in
            events.withLock { $0.append(event) }
            if event.isTerminal { done.finish() }
        }
        for await _ in ended {}
        return events.withLock { $0 }
    }
}

@Suite("HAR recorder bounds")
struct HARRecorderBoundTests {
    @Test func aRecorderKeepsTheNewestEntriesWithinItsLimitAndCountsTheDropped() async throws {
        try await TestServer.withRunning { server in
            let har = HARRecorder(maximumEntries: 10)
            let manager = URLSessionManager()
            manager.addEventMonitor(har)
            for index in 0..<25 {
                _ = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "anything/\(index)")))
            }
            let entries = har.archive().log.entries
            #expect(entries.count <= 10)
            #expect(har.droppedEntries + entries.count == 25, "nothing vanishes uncounted")
            #expect(entries.last?.request.url.hasSuffix("/anything/24") == true, "the newest stay")
        }
    }
}
