import Courier
import CourierTestServer
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// The examples of the "Sessions and Tasks" article, run against the in-process test server.
@Suite("Documentation: Sessions and Tasks")
struct SessionsAndTasksDocumentationExamples {
    /// Counts what a monitor hears, for the assertions; the article's monitor only prints.
    final class Heard: Sendable {
        let completions = Mutex(0)
    }

    @Test("configuration, a data task, progress and the completion")
    func dataTaskWithProgress() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.timeoutIntervalForRequest = 30             // idle time between bytes
            configuration.httpMaximumConnectionsPerHost = 4
            configuration.httpAdditionalHeaders = ["X-Client": "docs"]
            let manager = URLSessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()    // Data; the default expects JSON
            manager.completionQueue = DispatchQueue(label: "responses")  // in an app: .main

            let task = manager.dataTask(with: URLRequest(url: server.baseURL.appending(path: "bytes/65536")),
                                        completionHandler: { response, object, error in
                print(response?.statusCode ?? 0, (object as? Data)?.count ?? 0, error == nil)   // 200 65536 true
            })
            task.resume()
            for await progress in task.progressUpdates(.download) {   // ends when the task does
                print(Int(progress.fractionCompleted * 100), "%")
            }

            try await eventually { task.state == .completed }      // the completion has run
            #expect(task.countOfBytesReceived == 65536)
            #expect(task.response?.statusCode == 200)
        }
    }

    @Test("notifications and event monitors")
    func notificationsAndMonitors() async throws {
        try await TestServer.withRunning { server in
            let heard = Heard()
            struct PrintingMonitor: SessionEventMonitor {
                let heard: Heard
                func taskDidComplete(_ task: SessionTask, response: HTTPURLResponse?, responseObject: (any Sendable)?, error: (any Error)?) {
                    heard.completions.withLock { $0 += 1 }
                }
            }
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            // AFNetworking's notifications, with its names and userInfo keys.
            let observer = NotificationCenter.default.addObserver(forName: .courierTaskDidComplete, object: nil, queue: nil) { note in
                let error = note.userInfo?[SessionNotificationKey.error]
                print("completed", error == nil ? "without error" : "with an error")
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            // Or typed: a monitor hears every task of the manager, in order.
            manager.addEventMonitor(PrintingMonitor(heard: heard))
            _ = try await manager.get("get")
            try await eventually { heard.completions.withLock { $0 } == 1 }
        }
    }

    @Test("limits and credentials")
    func limits() async throws {
        try await TestServer.withRunning { server in
            // A cookie jar, a body-size limit, and a credential offered only to Digest.
            var configuration = SessionConfiguration()
            configuration.cookieJar = HTTPCookieJar()         // RFC 6265bis; none by default
            configuration.maximumResponseBodySize = 8 << 20   // data tasks fail past 8 MiB (default 64 MiB; nil: no limit)
            let manager = URLSessionManager(configuration: configuration)
            manager.credential = URLCredential(user: "ada", password: "secret", persistence: .forSession)
            manager.credentialSchemes = .digest               // a Basic-only challenge never gets the password

            // Any size, chunk by chunk, with backpressure; redirects, authentication, cookies and the
            // security policy apply as to any task.
            let (response, body) = try await manager.bytes(for: URLRequest(url: server.baseURL.appending(path: "download/16777216")))
            var received = 0
            for try await chunk in body { received += chunk.count }
            print(response.statusCode, received)              // 200 16777216

            #expect(received == 16 << 20)
            let digest = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "digest-auth/auth/ada/secret")))
            #expect(digest.response.statusCode == 200)
            await #expect(throws: CourierError.self) {
                _ = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "download/16777216")))
            }
        }
    }

    @Test("shutting down, awaited")
    func invalidation() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let running = Task { try await manager.get("delay/1") }
            try await eventually { !manager.tasks.isEmpty }
            await manager.invalidateSession(cancelingTasks: false)  // let running requests finish, then close
            #expect(try await running.value.response.statusCode == 200)
            #expect(manager.tasks.isEmpty)
        }
    }
}
