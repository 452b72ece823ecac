@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOPosix
import Testing

/// `URLSessionManager.taskExecutor`: every request shape awaited from a task on it completes
/// (nothing on the event loop waits for work that needs the loop), and the task is back on
/// the executor after each await.
@Suite("session task executor")
struct SessionTaskExecutorTests {
    @Test("data, typed, block, upload and download requests from a task on taskExecutor all complete")
    func everyShapeCompletesOnTheExecutor() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let destination = AsyncDownloadTests.destination()
            defer { try? FileManager.default.removeItem(at: destination) }
            let onLoop: [Bool] = try await withTaskExecutorPreference(manager.taskExecutor) {
                var onLoop: [Bool] = []
                let isOnLoop = { MultiThreadedEventLoopGroup.currentEventLoop != nil }
                onLoop.append(isOnLoop())

                let (object, response) = try await manager.data(for: URLRequest(url: server.baseURL.appendingPathComponent("get")))
                #expect(response.statusCode == 200 && object != nil)
                onLoop.append(isOnLoop())

                let typed = try await manager.get("json", as: JSONValue.self)
                #expect(typed.status == .ok)
                onLoop.append(isOnLoop())

                // AFN's block shape: the completion runs on the manager's completion queue.
                let status: Int = await withCheckedContinuation { continuation in
                    manager.get("status/204", parameters: nil, headers: nil, progress: nil) { task, _ in
                        continuation.resume(returning: task.response?.statusCode ?? 0)
                    } failure: { _, _ in
                        continuation.resume(returning: -1)
                    }
                }
                #expect(status == 204)
                onLoop.append(isOnLoop())

                let body = Data(repeating: 7, count: 1 << 20)
                let upload = try manager.upload(body, to: "upload")
                #expect(try await upload.response.status == .ok)
                onLoop.append(isOnLoop())

                let download = try manager.download("range/100000", to: destination)
                #expect(try await download.response.status == .ok)
                #expect(try Data(contentsOf: destination) == DownloadResumeTests.rangeBytes(100_000))
                onLoop.append(isOnLoop())
                return onLoop
            }
            #expect(onLoop == Array(repeating: true, count: 6))
            #expect(MultiThreadedEventLoopGroup.currentEventLoop == nil, "back on the caller's executor")
        }
    }

    @Test("a request that fails (refused connection, a 404 for a typed call) throws to a task still on taskExecutor")
    func failuresArriveOnTheExecutor() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let refused = try #require(URL(string: "http://127.0.0.1:1/get"))
            let onLoop: [Bool] = await withTaskExecutorPreference(manager.taskExecutor) {
                let isOnLoop = { MultiThreadedEventLoopGroup.currentEventLoop != nil }
                var onLoop: [Bool] = []
                do {
                    _ = try await manager.data(for: URLRequest(url: refused))
                    Issue.record("a refused connection succeeded")
                } catch {
                    onLoop.append(isOnLoop())
                }
                do {
                    _ = try await manager.get("status/404", as: JSONValue.self)
                    Issue.record("a 404 decoded")
                } catch {
                    onLoop.append(isOnLoop())
                }
                return onLoop
            }
            #expect(onLoop == [true, true])
        }
    }
}
