import Courier
import CourierServiceLifecycle
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import ServiceLifecycle
import Testing

/// `SessionManagerService` in a real `ServiceGroup`, against the test server: graceful
/// shutdown lets the running request finish, cancellation cancels it, and the group returns
/// only once the manager is invalid and its connections are closed.
@Suite struct SessionManagerServiceTests {
    /// The outcome of one request, set by its completion handler.
    final class Outcome: @unchecked Sendable {
        // @unchecked: every access holds the lock.
        private let lock = NSLock()
        private var result: (status: Int?, error: (any Error)?)?

        var value: (status: Int?, error: (any Error)?)? { lock.withLock { result } }

        func record(_ response: HTTPURLResponse?, _ error: (any Error)?) {
            lock.withLock { result = (response?.statusCode, error) }
        }
    }

    static let logger = Logger(label: "courier.service-lifecycle-tests")

    /// Starts a request the server answers after one second (or, with `answered` false, never:
    /// only cancelling ends it) and waits until the server has it.
    static func startSlowRequest(
        _ manager: URLSessionManager, _ server: TestServer, answered: Bool = true
    ) async throws -> Outcome {
        let outcome = Outcome()
        let path = answered ? "/delay/1" : "/fault/no-response"
        manager.dataTask(
            with: URLRequest(url: try #require(URL(string: server.baseURL.absoluteString + path))),
            completionHandler: { response, _, error in outcome.record(response, error) }
        ).resume()
        for _ in 0..<3000 where server.requestsReceived == 0 { try await Task.sleep(for: .milliseconds(20)) }
        try #require(server.requestsReceived == 1)
        return outcome
    }

    static func invalidationCount(of manager: URLSessionManager) -> Counter {
        let counter = Counter()
        manager.setSessionDidBecomeInvalidBlock { _, _ in counter.increment() }
        return counter
    }

    final class Counter: @unchecked Sendable {
        // @unchecked: every access holds the lock.
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func increment() { lock.withLock { count += 1 } }
    }

    @Test func gracefulShutdownLetsTheRunningRequestFinish() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let invalidations = Self.invalidationCount(of: manager)
            let group = ServiceGroup(services: [SessionManagerService(manager: manager)], logger: Self.logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let outcome = try await Self.startSlowRequest(manager, server)
                await group.triggerGracefulShutdown()
                try await tasks.next()  // the group returned

                // Checked right away: the group's return means the request is done.
                let result = try #require(outcome.value, "the group returned before the request completed")
                #expect(result.error == nil)
                #expect(result.status == 200)
                #expect(manager.tasks.isEmpty)
                #expect(invalidations.value == 1)
            }
            // An invalidated manager runs nothing more.
            let after = Outcome()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                manager.dataTask(
                    with: URLRequest(url: server.baseURL.appendingPathComponent("get")),
                    completionHandler: { response, _, error in
                        after.record(response, error)
                        continuation.resume()
                    }
                ).resume()
            }
            guard case .cancelled = after.value?.error as? CourierError else {
                Issue.record("expected cancelled, got \(String(describing: after.value?.error))")
                return
            }
        }
    }

    @Test func gracefulShutdownCancelsWhenAsked() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let service = SessionManagerService(manager: manager, cancelsRunningTasks: true)
            let group = ServiceGroup(services: [service], logger: Self.logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let outcome = try await Self.startSlowRequest(manager, server, answered: false)
                await group.triggerGracefulShutdown()
                try await tasks.next()
                guard case .cancelled = try #require(outcome.value).error as? CourierError else {
                    Issue.record("expected cancelled, got \(String(describing: outcome.value?.error))")
                    return
                }
            }
        }
    }

    @Test func cancellingTheGroupCancelsTheRunningRequest() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let invalidations = Self.invalidationCount(of: manager)
            let group = ServiceGroup(services: [SessionManagerService(manager: manager)], logger: Self.logger)
            let outcome = try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let outcome = try await Self.startSlowRequest(manager, server, answered: false)
                tasks.cancelAll()
                try await tasks.next()
                return outcome
            }
            guard case .cancelled = try #require(outcome.value).error as? CourierError else {
                Issue.record("expected cancelled, got \(String(describing: outcome.value?.error))")
                return
            }
            #expect(invalidations.value == 1)
        }
    }

    /// Stands in for an HTTP server in the README's group: stops on graceful shutdown, and
    /// says when.
    struct StandInServer: Service {
        let stopped: @Sendable () -> Void

        func run() async throws {
            try? await gracefulShutdown()
            stopped()
        }
    }

    final class Events: @unchecked Sendable {
        // @unchecked: every access holds the lock.
        private let lock = NSLock()
        private var list: [String] = []
        var value: [String] { lock.withLock { list } }
        func append(_ event: String) { lock.withLock { list.append(event) } }
    }

    /// The README's group, `[SessionManagerService(manager: client), server]`: on graceful
    /// shutdown the server stops first, then the client lets its running request finish and
    /// becomes invalid, and then the group returns.
    @Test func readmeShutdownExample() async throws {
        try await TestServer.withRunning { origin in
            let client = URLSessionManager()
            let events = Events()
            client.setSessionDidBecomeInvalidBlock { _, _ in events.append("client invalid") }
            let server = StandInServer { events.append("server stopped") }
            let group = ServiceGroup(services: [SessionManagerService(manager: client), server], logger: Self.logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let outcome = try await Self.startSlowRequest(client, origin)
                await group.triggerGracefulShutdown()
                try await tasks.next()
                #expect(try #require(outcome.value).status == 200)
                #expect(events.value == ["server stopped", "client invalid"])
            }
        }
    }
}
