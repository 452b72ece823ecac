@testable import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Metrics
import MetricsTestKit
import Testing
import Tracing

/// Observability through a real session against the test server: log records
/// captured by a test log handler (redaction checked), metrics by MetricsTestKit's factory,
/// spans by an in-memory W3C tracer. Every backend is handed to the configuration: nothing is
/// bootstrapped globally.
@Suite("Observability through the session")
struct ObservabilitySessionTests {
    /// A URL on a port where nothing listens: port 1 on loopback. (A port freed by a stopped
    /// server could be taken by another suite's server in a parallel run.)
    private func refusedURL() async throws -> URL {
        try #require(URL(string: "http://127.0.0.1:1/get"))
    }

    @Test func logRecordsCarryTheRequestAndHideCredentials() async throws {
        let recorder = LogRecorder()
        var configuration = SessionConfiguration()
        configuration.observability.logger = recorder.logger
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(configuration: configuration)
            let url = try #require(URL(string: "http://alice:hunter2pw@127.0.0.1:\(server.port)/get?access_token=t0ken&page=2&api-key=k3y#frag"))
            var request = URLRequest(url: url)
            request.setValue("Bearer s3cret", forHTTPHeaderField: "Authorization")
            request.setValue("session=c00kie", forHTTPHeaderField: "Cookie")
            _ = try await manager.data(for: request)
        }
        let records = recorder.all
        // Nothing secret in any record.
        for record in records {
            let text = "\(record.message) \(record.metadata)"
            for secret in ["hunter2pw", "t0ken", "k3y", "s3cret", "c00kie", "alice", "frag"] {
                #expect(!text.contains(secret), "\(secret) leaked in \(text)")
            }
        }
        let start = try #require(records.first { $0.message == "HTTP request" })
        #expect(start.level == .debug)
        #expect(start.metadata["http.request.method"] == "GET")
        let full = start.metadata["url.full"]?.description ?? ""
        #expect(full.hasPrefix("http://REDACTED:REDACTED@127.0.0.1:"))
        #expect(full.hasSuffix("/get?access_token=REDACTED&page=2&api-key=REDACTED"))
        guard case .dictionary(let headers) = start.metadata["http.request.headers"] else {
            Issue.record("no request headers in \(start.metadata)")
            return
        }
        #expect(headers["Authorization"] == "REDACTED")
        #expect(headers["Cookie"] == "REDACTED")
        let response = try #require(records.first { $0.message == "HTTP response" })
        #expect(response.metadata["http.response.status_code"] == "200")
        #expect(response.metadata["courier.duration_ms"] != nil)
        let finished = try #require(records.first { $0.message == "HTTP task finished" })
        #expect(finished.level == .info)
        #expect(finished.metadata["http.response.status_code"] == "200")
        // One request id across the task's records.
        let ids = Set(records.compactMap { $0.metadata["courier.request_id"]?.description })
        #expect(ids.count == 1)
        #expect(ids.first?.count == 16)
    }

    /// A credential header whose name isn't one the engine sends (a space or a colon in it: the
    /// request is refused) is still hidden in the trace-level record written before that.
    @Test func aCredentialHeaderWithAMalformedNameIsHidden() async throws {
        let recorder = LogRecorder()
        var configuration = SessionConfiguration()
        configuration.observability.logger = recorder.logger
        let manager = HTTPSessionManager(configuration: configuration)
        for name in ["Authorization ", " Authorization", "Authorization:", "Cookie\t", "X-Api-Key;"] {
            var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/get")))
            request.setValue("s3cret", forHTTPHeaderField: name)
            _ = try? await manager.data(for: request)
        }
        #expect(recorder.all.contains { $0.message == "HTTP request" })
        for record in recorder.all {
            let text = "\(record.message) \(record.metadata)"
            #expect(!text.contains("s3cret"), "\(text)")
        }
    }

    @Test func aFailedTaskIsLoggedAsAWarningWithItsKind() async throws {
        let recorder = LogRecorder()
        var configuration = SessionConfiguration()
        configuration.observability.logger = recorder.logger
        let manager = HTTPSessionManager(configuration: configuration)
        await #expect(throws: (any Error).self) { _ = try await manager.data(for: URLRequest(url: try await refusedURL())) }
        let failed = try #require(recorder.all.first { $0.message == "HTTP task failed" })
        #expect(failed.level == .warning)
        #expect(failed.metadata["error.type"] == "cannotConnect")
        let exchange = try #require(recorder.all.first { $0.message == "HTTP exchange failed" })
        #expect(exchange.metadata["error.type"] == "cannot_connect")
    }

    /// An error whose description holds the request's URL (a body past the limit) is logged
    /// with the URL redacted as `url.full` is: no password, no token value.
    @Test func aLoggedErrorMessageHidesTheURLsSecrets() async throws {
        try await TestServer.withRunning { server in
            let recorder = LogRecorder()
            var configuration = SessionConfiguration()
            configuration.observability.logger = recorder.logger
            configuration.maximumResponseBodySize = 100
            let manager = HTTPSessionManager(configuration: configuration)
            let port = try #require(server.baseURL.port)
            let url = try #require(URL(string: "http://user:s3cretpw@127.0.0.1:\(port)/bytes/1000?access_token=s3crettoken"))
            await #expect(throws: (any Error).self) { _ = try await manager.data(for: URLRequest(url: url)) }
            let failed = try #require(recorder.all.first { $0.message == "HTTP task failed" })
            let message = try #require(failed.metadata["error.message"]?.description)
            #expect(message.contains("larger than the limit"), "\(message)")
            for record in recorder.all {
                for (key, value) in record.metadata {
                    #expect(!value.description.contains("s3cret"), "\(record.message) \(key): \(value)")
                }
            }
        }
    }

    @Test func metricsCountRequestsFailuresBytesAndDurations() async throws {
        let metrics = TestMetrics()
        var configuration = SessionConfiguration()
        configuration.observability.metricsFactory = metrics
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
            for _ in 0..<3 { _ = try await manager.get("get") }
            _ = try await manager.post("post", parameters: ["a": "b"])
            await #expect(throws: (any Error).self) { _ = try await manager.get("status/503") }
        }
        let manager = HTTPSessionManager(configuration: configuration)
        await #expect(throws: (any Error).self) { _ = try await manager.data(for: URLRequest(url: try await refusedURL())) }

        let labels = SessionObservability.MetricLabels.self
        let get2xx = [("http.request.method", "GET"), ("http.response.status_class", "2xx")]
        #expect(try metrics.expectCounter(labels.requests, get2xx).totalValue == 3)
        #expect(try metrics.expectCounter(labels.requests, [("http.request.method", "POST"), ("http.response.status_class", "2xx")]).totalValue == 1)
        #expect(try metrics.expectCounter(labels.requests, [("http.request.method", "GET"), ("http.response.status_class", "5xx")]).totalValue == 1)
        #expect(try metrics.expectCounter(labels.requests, [("http.request.method", "GET"), ("http.response.status_class", "error")]).totalValue == 1)
        #expect(try metrics.expectTimer(labels.duration, get2xx).values.count == 3)
        #expect(try metrics.expectTimer(labels.duration, get2xx).values.allSatisfy { $0 > 0 })
        #expect(try metrics.expectCounter(labels.failures, [("http.request.method", "GET"), ("error.type", "cannotConnect")]).totalValue == 1)
        // The 503 fails the task in the response serializer: a failure of its own kind.
        let failureKinds = metrics.counters.filter { $0.label == labels.failures }.flatMap { $0.dimensions.filter { $0.0 == "error.type" }.map(\.1) }
        #expect(failureKinds.count == 2)
        #expect(try metrics.expectCounter(labels.bytesSent, [("http.request.method", "POST")]).totalValue > 3)
        #expect(try metrics.expectCounter(labels.bytesReceived, [("http.request.method", "GET")]).totalValue > 100)
        // Bounded dimensions: no host unless asked.
        #expect(!metrics.counters.contains { $0.dimensions.contains { $0.0 == "server.address" } })
    }

    @Test func metricsCarryTheHostOnlyWhenAsked() async throws {
        let metrics = TestMetrics()
        var configuration = SessionConfiguration()
        configuration.observability.metricsFactory = metrics
        configuration.observability.metricsIncludeServerAddress = true
        try await TestServer.withRunning { server in
            _ = try await HTTPSessionManager(baseURL: server.baseURL, configuration: configuration).get("get")
        }
        let dimensions = [("http.request.method", "GET"), ("http.response.status_class", "2xx"), ("server.address", "127.0.0.1")]
        #expect(try metrics.expectCounter(SessionObservability.MetricLabels.requests, dimensions).totalValue == 1)
    }

    @Test func spansFollowTheHTTPConventionsAndTraceparentReachesTheServer() async throws {
        let tracer = W3CTestTracer()
        var configuration = SessionConfiguration()
        configuration.observability.tracer = tracer
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(configuration: configuration)
            let parent = tracer.inner.startSpan("parent", context: .topLevel, ofKind: .internal)
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/headers?token=t0ken"))
            let (object, _) = try await InstrumentationContext.withValue(parent.context) {
                try await manager.data(for: URLRequest(url: url))
            }
            parent.end()
            let headers = (object as? JSONValue)?["headers"]
            let span = try #require(tracer.finishedSpans.first { $0.operationName == "GET" })
            #expect(span.kind == .client)
            #expect(span.parentSpanID == parent.spanID)
            #expect(span.traceID == parent.traceID)
            #expect(headers?["Traceparent"] == .string("00-\(span.traceID)-\(span.spanID)-01"))
            #expect(span.attributes.get("http.request.method") == .string("GET"))
            #expect(span.attributes.get("url.full") == .string("http://127.0.0.1:\(server.port)/headers?token=REDACTED"))
            #expect(span.attributes.get("server.address") == .string("127.0.0.1"))
            #expect(span.attributes.get("server.port") == .int64(Int64(server.port)))
            #expect(span.attributes.get("http.response.status_code") == .int64(200))
            #expect(span.attributes.get("error.type") == nil)
            #expect(span.status == nil)
            // The phases as span events, in order, at the instants they happened.
            let names = span.events.map(\.name)
            #expect(
                names == [
                    "courier.connectionWaitStart", "courier.connectStart", "courier.connectAttemptStart", "courier.connectAttemptEnd",
                    "courier.connectEnd", "courier.connectionWaitEnd",
                    "courier.connectionAcquired", "courier.requestHeadersStart", "courier.requestHeadersEnd",
                    "courier.responseHeadersStart", "courier.responseHeadersEnd", "courier.responseBodyStart",
                    "courier.responseBodyEnd", "courier.connectionReleased",
                ], "\(names)")
            let instants = span.events.map(\.nanosecondsSinceEpoch)
            #expect(instants == instants.sorted())

            await #expect(throws: (any Error).self) {
                _ = try await manager.data(for: URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)/status/500"))))
            }
            let failed = try #require(tracer.finishedSpans.last)
            #expect(failed.attributes.get("http.response.status_code") == .int64(500))
            #expect(failed.attributes.get("error.type") == .string("500"))
            #expect(failed.status?.code == .error)
        }
        let manager = HTTPSessionManager(configuration: configuration)
        await #expect(throws: (any Error).self) { _ = try await manager.data(for: URLRequest(url: try await refusedURL())) }
        let refused = try #require(tracer.finishedSpans.last)
        #expect(refused.attributes.get("error.type") == .string("cannot_connect"))
        #expect(refused.status?.code == .error)
        #expect(refused.errors.count == 1)
    }

    /// The error a span records is shown as its status message is: a URL with credentials the
    /// engine refuses (port 0) names that URL in its error, which reached the span unredacted.
    @Test func aSpansRecordedErrorHidesTheURLsSecrets() async throws {
        let tracer = W3CTestTracer()
        var configuration = SessionConfiguration()
        configuration.observability.tracer = tracer
        let manager = HTTPSessionManager(configuration: configuration)
        let url = try #require(URL(string: "http://user:s3cretpw@127.0.0.1:0/x?access_token=s3crettoken"))
        await #expect(throws: (any Error).self) { _ = try await manager.data(for: URLRequest(url: url)) }
        let span = try #require(tracer.finishedSpans.last)
        #expect(span.errors.count == 1)
        for recorded in span.errors {
            let shown = String(describing: recorded.error)
            #expect(shown.contains("invalid URL"), "\(shown)")
            #expect(!shown.contains("s3cret"), "\(shown)")
        }
        #expect(span.status?.message?.contains("s3cret") == false)
    }

    @Test func eachRedirectHopIsItsOwnSpanAndExchange() async throws {
        let tracer = W3CTestTracer()
        let metrics = TestMetrics()
        var configuration = SessionConfiguration()
        configuration.observability = SessionObservability(metricsFactory: metrics, tracer: tracer)
        try await TestServer.withRunning { server in
            _ = try await HTTPSessionManager(baseURL: server.baseURL, configuration: configuration).get("redirect/2")
        }
        let spans = tracer.finishedSpans
        #expect(spans.count == 3)
        #expect(spans.map { $0.attributes.get("http.request.resend_count") } == [nil, .int64(1), .int64(2)])
        #expect(spans.map { $0.attributes.get("http.response.status_code") } == [.int64(302), .int64(302), .int64(200)])
        #expect(try metrics.expectCounter(SessionObservability.MetricLabels.requests, [("http.request.method", "GET"), ("http.response.status_class", "3xx")]).totalValue == 2)
    }

    @Test func eachRetryAttemptIsItsOwnRecordSpanAndCount() async throws {
        let recorder = LogRecorder()
        let tracer = W3CTestTracer()
        let metrics = TestMetrics()
        var configuration = SessionConfiguration()
        configuration.observability = SessionObservability(logger: recorder.logger, metricsFactory: metrics, tracer: tracer)
        try await TestServer.withRunning { server in
            let manager = URLSessionManager(configuration: configuration)
            manager.interceptor = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)
            _ = try await manager.data(for: URLRequest(url: server.sessionURL("/retry/observed?fail=2")))
            #expect(server.requestsReceived(forPath: "/retry/observed") == 3)
        }
        let spans = tracer.finishedSpans
        #expect(spans.map { $0.attributes.get("http.response.status_code") } == [.int64(503), .int64(503), .int64(200)])
        #expect(spans.map { $0.attributes.get("http.request.resend_count") } == [nil, .int64(1), .int64(2)])
        #expect(Set(spans.map(\.spanID)).count == 3)  // a fresh traceparent per attempt
        let labels = SessionObservability.MetricLabels.self
        #expect(try metrics.expectCounter(labels.requests, [("http.request.method", "GET"), ("http.response.status_class", "5xx")]).totalValue == 2)
        #expect(try metrics.expectCounter(labels.requests, [("http.request.method", "GET"), ("http.response.status_class", "2xx")]).totalValue == 1)
        let attempts = recorder.all.filter { $0.message == "HTTP request" }.compactMap { $0.metadata["courier.attempt"]?.description }
        #expect(attempts == ["0", "1", "2"])
        let finished = try #require(recorder.all.first { $0.message == "HTTP task finished" })
        #expect(finished.metadata["courier.retries"]?.description == "2")
        #expect(finished.metadata["courier.exchanges"]?.description == "3")
        let scheduled = recorder.all.filter { $0.message == "HTTP retry scheduled" }
        #expect(scheduled.map(\.level) == [.info, .info])
        #expect(scheduled.compactMap { $0.metadata["courier.attempt"]?.description } == ["1", "2"])
        #expect(scheduled.allSatisfy { $0.metadata["courier.retry_delay_ms"] != nil && $0.metadata["error.type"] != nil })
    }

    /// The README's "Logs, metrics and traces" example, verbatim but for the server's URL, with
    /// a W3C test tracer bound for the task (`withTracer`, no global bootstrap) so
    /// `InstrumentationSystem.tracer` finds it; metrics go to the (unbootstrapped, no-op) global factory.
    @Test func readmeObservabilityExample() async throws {
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
                _ = try await manager.get("get", parameters: ["access_token": "abc"])  // logged as access_token=REDACTED
            }
        }
        let span = try #require(tracer.finishedSpans.first)
        guard case .string(let full) = span.attributes.get("url.full") else {
            Issue.record("no url.full on \(span.operationName)")
            return
        }
        #expect(full.hasSuffix("/get?access_token=REDACTED"))
    }

    @Test func nothingIsObservedByDefault() {
        let configuration = SessionConfiguration()
        #expect(!configuration.observability.isEnabled)
        #expect(SessionObserver(configuration.observability) == nil)
        let manager = URLSessionManager(configuration: configuration)
        let task = manager.dataTask(with: URLRequest(url: URL(fileURLWithPath: "/")), completionHandler: nil)
        #expect(task.delegate is TaskDelegate)
        #expect((task.delegate as? TaskDelegate)?.observation == nil)
    }

    /// An awaited data task with nothing else configured handles its events on the event loop
    /// that delivers them (the hot path); a configured log handler is user code and must still
    /// never run there.
    @Test func logHandlersNeverRunOnAnEventLoop() async throws {
        let recorder = LogRecorder()
        var configuration = SessionConfiguration()
        configuration.observability.logger = recorder.logger
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(configuration: configuration)
            for path in ["/get", "/bytes/70000", "/status/503"] {
                let url = try #require(URL(string: "http://127.0.0.1:\(server.port)\(path)"))
                _ = try? await manager.data(for: URLRequest(url: url))
            }
        }
        let records = recorder.all
        #expect(records.contains { $0.message == "HTTP response" })
        let onLoop = records.filter(\.onEventLoop).map(\.message)
        #expect(onLoop.isEmpty, "log records written on an event loop: \(onLoop)")
    }
}
