import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Metrics
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
}
