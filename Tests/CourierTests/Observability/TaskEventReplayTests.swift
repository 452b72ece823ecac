@testable import Courier
import CourierEngine
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A GET whose kept-alive connection the server closed while it sat idle is sent again on a new
/// connection: monitors hear it as a decision, before the new connection's setup.
@Suite("Task events: replay on a stale connection")
struct TaskEventReplayTests {
    @Test func aReplayIsADecisionBeforeTheNewConnection() async throws {
        let script = HostileScript([.readHead, .readBody, .head("200 OK", ["Content-Length: 2"]), .write("ok"), .readHead, .close])
        try await HostileServer.withRunning(script) { server in
            let recorder = TaskEventRecorder()
            let manager = URLSessionManager()
            let serializer = HTTPResponseSerializer()
            serializer.acceptableContentTypes = nil  // the hostile server sends none
            manager.responseSerializer = serializer
            manager.addEventMonitor(recorder)
            _ = try await manager.data(for: URLRequest(url: server.url("/first")))
            #expect(!recorder.decisions().contains { $0.name == "replayedOnNewConnection" })

            let before = recorder.events.count
            _ = try await manager.data(for: URLRequest(url: server.url("/second")))
            let second = recorder.events.suffix(from: before).map(\.kind.name)
            let replay = try #require(second.firstIndex(of: "replayedOnNewConnection"), "\(second)")
            let connect = try #require(second.firstIndex(of: "connectStart"), "\(second)")
            #expect(replay < connect, "\(second)")
            #expect(server.connectionsAccepted == 2)
            #expect(recorder.exchanges.last?.metrics.replayedAttempts.count == 1)
        }
    }
}
