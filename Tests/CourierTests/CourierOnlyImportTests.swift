// This file imports Courier and nothing of the engine (no CourierEngine, no NIO): the TLS and
// proxy configuration, task metrics, request bodies and engine errors that Courier's public API
// hands out must be usable by a user of the AFNetworking layer as they are.
import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite("Courier alone: the engine types its API uses need no other import")
struct CourierOnlyImportTests {
    /// A value set from one callback and read by the test afterwards.
    final class Box<Value: Sendable>: @unchecked Sendable {
        // @unchecked: every access holds the lock.
        private let lock = NSLock()
        private var stored: Value

        init(_ value: Value) { stored = value }

        var value: Value {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }

    /// `SessionConfiguration.tls` (`EngineTLSConfiguration` and its `ClientIdentity`) over
    /// mutual TLS, and `SessionTask.metrics` / the metrics block (`EngineMetrics`).
    @Test func tlsConfigurationAndMetrics() async throws {
        let authority = try TestCertificateAuthority.shared
        try await TestServer.withRunning(.init(tls: .valid, requireClientCertificate: true)) { server in
            var tls = EngineTLSConfiguration()
            tls.additionalTrustRootsDER = [authority.rootCertificateDER]
            tls.trustsSystemRoots = false
            tls.minimumTLSVersion = .tlsv12
            tls.clientIdentity = EngineTLSConfiguration.ClientIdentity(
                certificateChainDER: authority.clientIdentity.certificatesDER, privateKeyDER: authority.clientIdentity.privateKeyDER)
            var configuration = SessionConfiguration()
            configuration.tls = tls
            let manager = URLSessionManager(configuration: configuration)
            let collected = Box<EngineMetrics?>(nil)
            manager.setTaskDidFinishCollectingMetricsBlock { _, metrics in collected.value = metrics }

            let recorder = CompletionRecorder()
            let task = manager.dataTask(with: URLRequest(url: server.sessionURL("/get")), completionHandler: recorder.handler)
            task.resume()
            await recorder.wait()
            #expect(recorder.first?.error == nil)
            #expect(recorder.first?.response?.statusCode == 200)
            let taskMetrics: EngineMetrics? = task.metrics
            #expect(taskMetrics?.tlsProtocolVersion != nil)
            try await eventually { collected.value != nil }
            let metrics: EngineMetrics = try #require(collected.value)
            #expect(metrics.secureConnectionEnd != nil)
            #expect(metrics.tlsProtocolVersion != nil)
            #expect(metrics.requestHeaderBytesSent > 0)
            await manager.invalidateSession(cancelingTasks: false)
        }
    }

    /// `SessionConfiguration.proxy` (`EngineProxy`): the test server answers absolute-form
    /// requests for any host as a forward proxy.
    @Test func proxyConfiguration() async throws {
        try await TestServer.withRunning { server in
            var configuration = SessionConfiguration()
            configuration.proxy = EngineProxy(host: "127.0.0.1", port: server.port)
            let manager = URLSessionManager(configuration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            let url = try #require(URL(string: "http://courier-only-import.example/get"))
            let (_, response) = try await manager.data(for: URLRequest(url: url))
            #expect(response.statusCode == 200)
            #expect(server.requestsReceived == 1)
            await manager.invalidateSession(cancelingTasks: false)
        }
    }

    /// `RequestBody` (data, file, stream, sequence) for uploads and `bytes(for:body:)`, with
    /// chunks written as `Data`, and the engine's errors inside `CourierError.engine`.
    @Test func requestBodies() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.responseSerializer = HTTPResponseSerializer()
            let upload = server.baseURL.appendingPathComponent("upload")
            var request = URLRequest(url: upload)
            request.httpMethod = "POST"

            let chunk = Data(repeating: 0x61, count: 10_000)
            let streamed: RequestBody = .stream(length: nil) { writer in
                for _ in 0..<3 { try await writer.write(chunk) }
                try await writer.write(contentsOf: [0x62, 0x63])
            }
            #expect(streamed.expectedLength == nil)
            let (_, stream) = try await manager.bytes(for: request, body: streamed)
            var received = Data()
            for try await piece in stream { received.append(piece) }
            let answer = try JSONSerialization.jsonObject(with: received) as? [String: Any]
            #expect(answer?["bytes"] as? Int == 30_002)

            let chunks = AsyncStream<Data> { continuation in
                continuation.yield(Data("hello, ".utf8))
                continuation.yield(Data("world".utf8))
                continuation.finish()
            }
            let sequenced = try await uploaded(manager, request, body: .sequence(chunks, length: 12))
            #expect(sequenced?["bytes"] as? Int == 12)

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-only-import-\(UUID().uuidString)")
            try Data(repeating: 0x7a, count: 4096).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let fromFile = try await uploaded(manager, request, body: .file(path: file.path))
            #expect(fromFile?["bytes"] as? Int == 4096)
            #expect(RequestBody.data(Data("x".utf8)).isReplayable)

            let missing = RequestBody.file(path: file.path + ".missing")
            do {
                _ = try await uploaded(manager, request, body: missing)
                Issue.record("a missing file was uploaded")
            } catch let error as CourierError {
                guard case .engine(let engineError) = error, case .invalidBody = engineError else {
                    Issue.record("expected engine(.invalidBody), got \(error)")
                    return
                }
            }
            await manager.invalidateSession(cancelingTasks: false)
        }
    }

    /// Uploads `body` with a streamed upload task and returns `/upload`'s JSON answer.
    private func uploaded(_ manager: URLSessionManager, _ request: URLRequest, body: RequestBody) async throws -> [String: Any]? {
        let result = Box<Result<Data, any Error>>(.success(Data()))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            manager.uploadTask(
                withStreamedRequest: request, body: body,
                completionHandler: { _, object, error in
                    if let error {
                        result.value = .failure(error)
                    } else {
                        result.value = .success((object as? Data) ?? Data())
                    }
                    continuation.resume()
                }
            ).resume()
        }
        let data = try result.value.get()
        return try JSONSerialization.jsonObject(with: data) as? [String: Any]
    }
}
