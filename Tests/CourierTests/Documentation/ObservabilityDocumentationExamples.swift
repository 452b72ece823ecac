import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Metrics
import Synchronization
import Testing
import Tracing

/// The example of the "Observability" article, run against the in-process test server with a
/// W3C test tracer bound for the task (no global bootstrap).
@Suite("Documentation: Observability")
struct ObservabilityDocumentationExamples {
    @Test("logs, metrics and traces, with secrets redacted")
    func observability() async throws {
        let tracer = W3CTestTracer()
        try await TestServer.withRunning { server in
            try await withTracer(tracer) {
                var configuration = SessionConfiguration()
                var logger = Logger(label: "my-app.http")
                logger.logLevel = .debug                                   // .trace adds the (redacted) request headers
                configuration.observability.logger = logger
                configuration.observability.metricsFactory = MetricsSystem.factory   // opt-in, per configuration
                configuration.observability.tracer = InstrumentationSystem.tracer    // spans + traceparent
                let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
                let (object, _) = try await manager.get("get", parameters: ["access_token": "abc"])  // logged as access_token=REDACTED
                print((object as? JSONValue)?["headers"]?["Traceparent"] ?? "-")  // the span's context, sent to the server

                #expect((object as? JSONValue)?["headers"]?["Traceparent"]?.stringValue?.hasPrefix("00-") == true)
            }
        }
        let span = try #require(tracer.finishedSpans.first)
        guard case .string(let full) = span.attributes.get("url.full") else {
            Issue.record("no url.full on \(span.operationName)")
            return
        }
        #expect(full.hasSuffix("/get?access_token=REDACTED"))
    }

    @Test("task events and an HTTP Archive")
    func taskEventsAndHAR() async throws {
        try await TestServer.withRunning { server in
            let recorder = TaskPhaseLog()
            let har = HARRecorder()
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            manager.addEventMonitor(recorder)
            manager.addEventMonitor(har)
            _ = try await manager.get("redirect/1", headers: ["Authorization": "Bearer sekrit"])
            print(recorder.lines.first ?? "", recorder.lines.last ?? "")   // hop 0 callStart hop 1 callEnd
            let archive = har.archive()
            print(archive.log.entries.map(\.response.status))                // [302, 200]

            #expect(recorder.lines.first == "hop 0 callStart")
            #expect(recorder.lines.last == "hop 1 callEnd")
            #expect(archive.log.entries.map(\.response.status) == [302, 200])
            let authorization = archive.log.entries.first?.request.headers.first { $0.name == "Authorization" }
            #expect(authorization?.value == "REDACTED")
        }
    }
}

/// The article's monitor: each event as a line.
final class TaskPhaseLog: SessionEventMonitor {
    private let state = Mutex<[String]>([])
    var lines: [String] { state.withLock { $0 } }

    func task(_ task: SessionTask, didReceive event: TaskEvent) {
        state.withLock { $0.append(event.description) }
    }
}
