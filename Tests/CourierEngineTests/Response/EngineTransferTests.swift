import CourierEngine
import CourierTestServer
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("HTTPEngine transfers against the test server")
struct EngineTransferTests {
    @Test func getEchoesQueryAndHeadersVerbatim() async throws {
        try await withEngine { engine, server in
            var headers = HTTPHeaders()
            headers.add(name: "X-Courier-Test", value: "yes")
            let response = try await engine.collect(
                EngineRequest(url: server.url("/get?a=1&b=%20x&c%5B%5D=2"), headers: headers)
            )
            #expect(response.head.status == .ok)
            let json = try response.json()
            let args = try #require(json["args"] as? [String: Any])
            #expect(args["a"] as? String == "1")
            #expect(args["b"] as? String == " x")
            let echoed = try #require(json["headers"] as? [String: Any])
            #expect(echoed["X-Courier-Test"] as? String == "yes")
            #expect((echoed["Host"] as? String) == "127.0.0.1:\(server.port)")
            #expect((json["url"] as? String)?.hasSuffix("/get?a=1&b=%20x&c%5B%5D=2") == true)
        }
    }

    @Test func ipv6() async throws {
        try await withEngine(server: .init(host: "::1")) { engine, server in
            let response = try await engine.collect(EngineRequest(url: server.url("/get")))
            #expect(response.head.status == .ok)
            #expect(response.metrics.remoteAddress == "::1")
        }
    }

    @Test func bytesBodyUp() async throws {
        try await withEngine { engine, server in
            let payload = #"{"hello":"world"}"#
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            let response = try await engine.collect(
                EngineRequest(method: "POST", url: server.url("/post"), headers: headers, body: .data(Data(payload.utf8)))
            )
            let json = try response.json()
            #expect(json["data"] as? String == payload)
            let echoedJSON = try #require(json["json"] as? [String: Any])
            #expect(echoedJSON["hello"] as? String == "world")
            let echoedHeaders = try #require(json["headers"] as? [String: Any])
            #expect(echoedHeaders["Content-Length"] as? String == String(payload.utf8.count))
            #expect(response.metrics.requestBodyBytesSent == Int64(payload.utf8.count))
        }
    }

    @Test func postWithoutBodySendsContentLengthZero() async throws {
        try await withEngine { engine, server in
            let json = try await engine.collect(EngineRequest(method: "POST", url: server.url("/post"))).json()
            let headers = try #require(json["headers"] as? [String: Any])
            #expect(headers["Content-Length"] as? String == "0")
            #expect(headers["Transfer-Encoding"] == nil)
        }
    }

    @Test func fileBodyUpIsStreamedAndHashedByServer() async throws {
        let size = 8 * 1024 * 1024 + 123
        var bytes = [UInt8](repeating: 0, count: size)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID()).bin").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let expected = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()

        try await withEngine { engine, server in
            let recorder = EventRecorder()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: path))) {
                recorder.record($0)
            }
            await recorder.waitForEnd()
            #expect(recorder.failure == nil)
            var body = ByteBuffer()
            var progress: [Int64] = []
            for event in recorder.all {
                switch event {
                case .bodyPart(var part): body.writeBuffer(&part)
                case .uploadProgress(let sent, let expected):
                    progress.append(sent)
                    #expect(expected == Int64(size))
                default: break
                }
            }
            let json = try #require(try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
            #expect((json["bytes"] as? NSNumber)?.intValue == size)
            #expect(json["sha256"] as? String == expected)
            #expect(progress == progress.sorted())
            #expect(progress.last == Int64(size))
        }
    }

    @Test(arguments: [true, false])
    func streamBodyUpKnownAndUnknownLength(knownLength: Bool) async throws {
        let chunk = ByteBuffer(repeating: 0x61, count: 64 * 1024)
        let chunks = 80
        var hasher = SHA256()
        for _ in 0..<chunks { hasher.update(data: Data(chunk.readableBytesView)) }
        let expected = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        try await withEngine { engine, server in
            let body = RequestBody.stream(length: knownLength ? Int64(chunks * chunk.readableBytes) : nil) { writer in
                for _ in 0..<chunks { try await writer.write(chunk) }
            }
            let response = try await engine.collect(EngineRequest(method: "POST", url: server.url("/upload"), body: body))
            let json = try response.json()
            #expect((json["bytes"] as? NSNumber)?.intValue == chunks * chunk.readableBytes)
            #expect(json["sha256"] as? String == expected)
        }
    }

    @Test func streamBodyShorterThanAnnouncedFails() async throws {
        try await withEngine { engine, server in
            let body = RequestBody.stream(length: 1000) { writer in
                try await writer.write(ByteBuffer(string: "too short"))
            }
            let error = await engineError {
                _ = try await engine.collect(EngineRequest(method: "POST", url: server.url("/upload"), body: body))
            }
            guard case .invalidBody = error else {
                Issue.record("expected invalidBody, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func downloadsFixedAndChunkedBodies() async throws {
        try await withEngine { engine, server in
            let fixed = try await engine.collect(EngineRequest(url: server.url("/bytes/100000?seed=7")))
            #expect(fixed.body.readableBytes == 100_000)
            #expect(fixed.metrics.responseBodyBytesReceived == 100_000)
            let chunked = try await engine.collect(EngineRequest(url: server.url("/stream-bytes/100000?chunk_size=4096&seed=7")))
            #expect(chunked.head.headers.first(name: "transfer-encoding")?.lowercased() == "chunked")
            #expect(chunked.body.readableBytes == 100_000)
            // The same seed gives the same bytes on both endpoints.
            #expect(Array(chunked.body.readableBytesView) == Array(fixed.body.readableBytesView))
            let large = try await engine.collect(EngineRequest(url: server.url("/download/20000000")))
            #expect(large.body.readableBytes == 20_000_000)
            #expect(large.body.readableBytesView.enumerated().allSatisfy { $0.element == UInt8(ascii: "a") + UInt8($0.offset % 26) })
        }
    }

    @Test func streamedDownloadDeliversEveryByte() async throws {
        try await withEngine { engine, server in
            let response = try await engine.stream(EngineRequest(url: server.url("/download/64000000")))
            var total = 0
            for try await chunk in response.body { total += chunk.readableBytes }
            #expect(total == 64_000_000)
            #expect(response.body.metrics?.responseBodyBytesReceived == 64_000_000)
        }
    }

    @Test func gzipAndDeflateAreDecompressed() async throws {
        try await withEngine { engine, server in
            let gzip = try await engine.collect(EngineRequest(url: server.url("/gzip"))).json()
            #expect(gzip["gzipped"] as? Bool == true)
            let deflate = try await engine.collect(EngineRequest(url: server.url("/deflate"))).json()
            #expect(deflate["deflated"] as? Bool == true)
        }
    }

    @Test func decompressionSizeLimitStopsBombs() async throws {
        var configuration = EngineConfiguration()
        configuration.decompression = .enabled(ratio: 1000, maximumSize: 64)
        try await withEngine(engine: configuration) { engine, server in
            let error = await engineError { _ = try await engine.collect(EngineRequest(url: server.url("/gzip"))) }
            guard case .decompressionLimitExceeded = error else {
                Issue.record("expected decompressionLimitExceeded, got \(String(describing: error))")
                return
            }
        }
    }

    /// What the server reads as `Accept-Encoding` (repeated fields would arrive joined by
    /// commas): exactly `deflate, gzip` with decompression on (HTTP/1.1 and HTTP/2), the
    /// caller's own value alone when it set one, and nothing with decompression off.
    @Test(arguments: [EngineConfiguration.HTTPVersionPolicy.http1Only, .automatic])
    func acceptEncodingAsTheServerReadsIt(_ policy: EngineConfiguration.HTTPVersionPolicy) async throws {
        func sent(_ configuration: EngineConfiguration, headers: HTTPHeaders = [:]) async throws -> String? {
            var configuration = configuration
            configuration.httpVersion = policy
            configuration.tls.trustsSystemRoots = false
            configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
            return try await withEngine(server: .init(tls: .valid), engine: configuration) { engine, server in
                let url = try #require(URL(string: "https://localhost:\(server.port)/headers"))
                let response = try await engine.collect(EngineRequest(url: url, headers: headers))
                #expect(response.metrics.networkProtocolName == (policy == .automatic ? "h2" : "http/1.1"))
                let echoed = try #require(try response.json()["headers"] as? [String: Any])
                return echoed["Accept-Encoding"] as? String
            }
        }
        #expect(try await sent(EngineConfiguration()) == "deflate, gzip")
        #expect(try await sent(EngineConfiguration(), headers: ["Accept-Encoding": "br"]) == "br")
        var off = EngineConfiguration()
        off.decompression = .disabled
        #expect(try await sent(off) == nil)
    }

    @Test func keepAliveReusesTheConnection() async throws {
        try await withEngine { engine, server in
            let first = try await engine.collect(EngineRequest(url: server.url("/get")))
            let second = try await engine.collect(EngineRequest(url: server.url("/get")))
            #expect(!first.metrics.isReusedConnection)
            #expect(second.metrics.isReusedConnection)
            #expect(first.metrics.connectStart != nil)
            #expect(second.metrics.connectStart == nil)
            #expect(first.metrics.localPort == second.metrics.localPort)
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func connectionCloseResponseIsNotReused() async throws {
        try await withEngine { engine, server in
            var headers = HTTPHeaders()
            headers.add(name: "Connection", value: "close")
            _ = try await engine.collect(EngineRequest(url: server.url("/get"), headers: headers))
            let second = try await engine.collect(EngineRequest(url: server.url("/get")))
            #expect(!second.metrics.isReusedConnection)
            #expect(server.connectionsAccepted == 2)
        }
    }

    @Test func serverClosingIdleConnectionIsDetected() async throws {
        try await withEngine { engine, server in
            // An HTTP/1.0-style response ends by close: the pool must not reuse that socket.
            let first = try await engine.collect(EngineRequest(url: server.url("/fault/close-delimited?bytes=1000")))
            #expect(first.body.readableBytes == 1000)
            #expect(first.metrics.networkProtocolName == "http/1.0")
            let second = try await engine.collect(EngineRequest(url: server.url("/get")))
            #expect(second.head.status == .ok)
            #expect(!second.metrics.isReusedConnection)
        }
    }

    @Test func perHostLimitQueuesRequests() async throws {
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = 2
        try await withEngine(engine: configuration) { engine, server in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await engine.collect(EngineRequest(url: server.url("/bytes/50000"))).body.readableBytes
                    }
                }
                var total = 0
                for try await count in group { total += count }
                #expect(total == 20 * 50_000)
            }
            #expect(server.connectionsAccepted <= 2)
            #expect(engine.openConnectionCount <= 2)
        }
    }

    @Test func thousandConcurrentRequestsAllComplete() async throws {
        try await withEngine { engine, server in
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for index in 0..<1000 {
                    group.addTask {
                        try await engine.collect(EngineRequest(url: server.url("/get?i=\(index)"))).head.status.code
                    }
                }
                var statuses: [UInt] = []
                for try await status in group { statuses.append(status) }
                return statuses
            }
            #expect(statuses.count == 1000)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(server.connectionsAccepted <= 6)
        }
    }

    @Test func continueInterimResponseIsSkipped() async throws {
        try await withEngine { engine, server in
            var headers = HTTPHeaders()
            headers.add(name: "Expect", value: "100-continue")
            let response = try await engine.collect(
                EngineRequest(method: "POST", url: server.url("/post"), headers: headers, body: .data(Data("abc".utf8)))
            )
            #expect(response.head.status == .ok)
            #expect(try response.json()["data"] as? String == "abc")
            let unsolicited = try await engine.collect(EngineRequest(url: server.url("/fault/continue")))
            #expect(unsolicited.head.status == .ok)
        }
    }

    @Test func metricsHaveEveryPhaseInOrder() async throws {
        try await withEngine { engine, server in
            let url = URL(string: "http://localhost:\(server.port)/get")!
            let metrics = try await engine.collect(EngineRequest(url: url)).metrics
            let domainLookupEnd = try #require(metrics.domainLookupEnd)
            let domainLookupStart = try #require(metrics.domainLookupStart)
            let connectStart = try #require(metrics.connectStart)
            let connectEnd = try #require(metrics.connectEnd)
            let requestStart = try #require(metrics.requestStart)
            let responseStart = try #require(metrics.responseStart)
            let responseEnd = try #require(metrics.responseEnd)
            #expect(metrics.fetchStart <= domainLookupStart)
            #expect(domainLookupStart <= domainLookupEnd)
            #expect(domainLookupEnd <= connectStart)
            #expect(connectStart <= connectEnd)
            #expect(connectEnd <= requestStart)
            #expect(requestStart <= responseStart)
            #expect(responseStart <= responseEnd)
            #expect(metrics.requestHeaderBytesSent > 20)
            #expect(metrics.responseHeaderBytesReceived > 20)
            #expect(metrics.remotePort == server.port)
            #expect(metrics.networkProtocolName == "http/1.1")
            #expect(metrics.tlsProtocolVersion == nil)
        }
    }

    @Test func invalidRequestsFailBeforeAnyIO() async throws {
        try await withEngine { engine, server in
            let ftp = await engineError { _ = try await engine.collect(EngineRequest(url: URL(string: "ftp://127.0.0.1/")!)) }
            #expect(ftp == .unsupportedScheme("ftp"))
            var headers = HTTPHeaders()
            headers.add(name: "X-Split", value: "a\r\nX-Injected: 1")
            let injected = await engineError {
                _ = try await engine.collect(EngineRequest(url: server.url("/get"), headers: headers))
            }
            guard case .invalidHeader = injected else {
                Issue.record("expected invalidHeader, got \(String(describing: injected))")
                return
            }
            let missing = await engineError {
                _ = try await engine.collect(
                    EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: "/nonexistent/courier"))
                )
            }
            guard case .invalidBody(let reason) = missing else {
                Issue.record("expected invalidBody, got \(String(describing: missing))")
                return
            }
            #expect(reason.contains("/nonexistent/courier"))
            #expect(server.connectionsAccepted == 0)
        }
    }

    @Test func dnsFailureAndRefusedConnectionAreTyped() async throws {
        let engine = try HTTPEngine()
        let dns = await engineError { _ = try await engine.collect(EngineRequest(url: URL(string: "http://no-such-host.invalid/")!)) }
        guard case .dnsFailure(let host, _) = dns else {
            Issue.record("expected dnsFailure, got \(String(describing: dns))")
            return
        }
        #expect(host == "no-such-host.invalid")
        // Port 1 on loopback: nothing listens there.
        let refused = await engineError { _ = try await engine.collect(EngineRequest(url: URL(string: "http://127.0.0.1:1/")!)) }
        guard case .cannotConnect = refused else {
            Issue.record("expected cannotConnect, got \(String(describing: refused))")
            return
        }
        await engine.shutdown()
    }
}
