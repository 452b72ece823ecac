import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Synchronization
import Testing

/// The examples of the CourierEngine catalog's "Using the Engine" article, run against the
/// in-process test server. `server.baseURL` stands for your origin.
@Suite("Documentation: Using the Engine")
struct EngineDocumentationExamples {
    @Test("collected, streamed, uploaded")
    func basics() async throws {
        try await TestServer.withRunning { server in
            let engine = try HTTPEngine()          // one per process or per configuration; share it

            // The whole response in memory.
            let response = try await engine.collect(EngineRequest(url: server.baseURL.appending(path: "get")))
            print(response.head.status, response.body.readableBytes, response.metrics.isReusedConnection)

            // A streamed body with backpressure: the socket is read only as fast as you consume.
            let download = try await engine.stream(EngineRequest(url: server.baseURL.appending(path: "bytes/102400")))
            var received = 0
            for try await chunk in download.body { received += chunk.readableBytes }

            // A streamed upload of unknown length (sent chunked); each write waits for the socket.
            let upload = EngineRequest(method: "POST", url: server.baseURL.appending(path: "upload"),
                                       body: .stream(length: nil) { writer in try await writer.write(ByteBuffer(string: "hello")) })
            let uploaded = try await engine.collect(upload)
            print(uploaded.head.status)

            await engine.shutdown()                // closes every connection; the engine is done

            #expect(response.head.status == .ok)
            #expect(received == 102_400)
            let answer = try JSONSerialization.jsonObject(with: Data(uploaded.body.readableBytesView)) as? [String: Any]
            #expect((answer?["bytes"] as? NSNumber)?.intValue == 5)
        }
    }

    @Test("the events of one request")
    func events() async throws {
        try await TestServer.withRunning { server in
            let engine = try HTTPEngine()
            // execute(_:onEvent:) is the layer everything else is built on: events arrive in order,
            // on the connection's event loop, so keep the handler short.
            let bodyBytes = Mutex(0)
            let (ended, done) = AsyncStream<Void>.makeStream()
            let task = engine.execute(EngineRequest(url: server.baseURL.appending(path: "bytes/4096"))) { event in
                switch event {
                case .uploadProgress(let sent, let expected):
                    print("sent", sent, "of", expected ?? -1)
                case .metricsUpdated:
                    break                                               // only with reportsMetricsUpdates
                case .responseHead(let head):
                    print(head.status)                                  // 200 OK
                case .bodyPart(let chunk):
                    bodyBytes.withLock { $0 += chunk.readableBytes }
                case .finished(let metrics):
                    print("done in", metrics.networkProtocolName ?? "-")   // http/1.1
                    done.finish()
                case .failed(let error, _):
                    print(error)                                        // an EngineError naming the cause
                    done.finish()
                }
            }
            _ = task                                                    // task.cancel() stops it on the wire
            for await _ in ended {}

            #expect(bodyBytes.withLock { $0 } == 4096)
            await engine.shutdown()
        }
    }

    @Test("configuration: HTTP versions, timeouts, TLS")
    func configuration() async throws {
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = EngineConfiguration()
            configuration.httpVersion = .automatic            // default: h2 when negotiated, else HTTP/1.1
            // configuration.httpVersion = .http1Only         // never offer h2
            // configuration.httpVersion = .http2PriorKnowledge // h2c for plain http (opt-in), only h2 over TLS
            configuration.tls.additionalTrustRootsDER = [server.certificateAuthority.rootCertificateDER]
            let engine = try HTTPEngine(configuration: configuration)
            guard let url = URL(string: "https://localhost:\(server.port)/get") else { return }
            let response = try await engine.collect(EngineRequest(url: url))
            print(response.metrics.networkProtocolName ?? "-")   // h2

            #expect(response.metrics.networkProtocolName == "h2")
            await engine.shutdown()
        }
    }

    @Test("keeping requests on one thread")
    func taskExecutor() async throws {
        try await TestServer.withRunning { server in
            let engine = try HTTPEngine()
            let urls = (1...64).map { server.baseURL.appending(path: "get").appending(queryItems: [URLQueryItem(name: "n", value: "\($0)")]) }
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
        }
    }
}
