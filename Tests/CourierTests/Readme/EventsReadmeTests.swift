import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The README's task events and HAR example, run against the test server.
@Suite("README: task events and HAR")
struct EventsReadmeTests {
    @Test func phasesAndAnHTTPArchive() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            struct PhasePrinter: SessionEventMonitor {
                func task(_ task: SessionTask, didReceive event: TaskEvent) {
                    print(event.hop, event.kind.name)                  // 0 callStart … 0 connectStart … 1 connectionAcquired … 1 callEnd
                }
            }
            let har = HARRecorder()                                   // Authorization, cookies and tokens written as REDACTED
            manager.addEventMonitor(PhasePrinter())
            manager.addEventMonitor(har)
            _ = try await manager.get("redirect/1")
            try har.write(to: URL(fileURLWithPath: NSTemporaryDirectory() + "courier.har"))   // 2 entries: the 302 and the 200

            let written = try Data(contentsOf: URL(fileURLWithPath: NSTemporaryDirectory() + "courier.har"))
            let archive = try JSONDecoder().decode(HARArchive.self, from: written)
            #expect(archive.log.entries.map(\.response.status) == [302, 200])
            #expect(archive.log.version == "1.2")
        }
    }
}
