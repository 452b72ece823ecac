import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Testing

/// The README's engine example, compiled and run against the test server (only the base URL
/// differs), so the README can't drift from the API.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test func engineExample() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL.absoluteString

        let engine = try HTTPEngine()
        let response = try await engine.collect(EngineRequest(url: URL(string: "\(base)/get?a=1")!))
        print(response.head.status, response.body.readableBytes, response.metrics.isReusedConnection)

        let download = try await engine.stream(EngineRequest(url: URL(string: "\(base)/bytes/102400")!))
        var received = 0
        for try await chunk in download.body { received += chunk.readableBytes }

        let upload = EngineRequest(
            method: "POST",
            url: URL(string: "\(base)/upload")!,
            body: .stream(length: nil) { writer in try await writer.write(ByteBuffer(string: "hello")) }
        )
        let uploaded = try await engine.collect(upload)

        #expect(response.head.status == .ok)
        #expect(received == 102_400)
        let answer = try JSONSerialization.jsonObject(with: Data(uploaded.body.readableBytesView)) as? [String: Any]
        #expect((answer?["bytes"] as? NSNumber)?.intValue == 5)
        await engine.shutdown()
        try await server.shutdown()
    }

    /// The README's `taskExecutor` example (64 GETs in flight from the engine's executor).
    @Test func taskExecutorExample() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL.absoluteString
        let engine = try HTTPEngine()

        let urls = (1...64).map { URL(string: "\(base)/get?n=\($0)")! }
        let statuses = try await withTaskExecutorPreference(engine.taskExecutor) {
            try await withThrowingTaskGroup(of: UInt.self) { group in
                for url in urls {
                    group.addTask { try await engine.collect(EngineRequest(url: url)).head.status.code }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }

        #expect(statuses == Array(repeating: 200, count: 64))
        await engine.shutdown()
        try await server.shutdown()
    }
}
