@testable import Courier
@testable import CourierEngine
import CourierTestServer
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import Testing

/// `RequestCompressor` against the test server's `/upload`, which inflates gzip and deflate
/// bodies as they arrive and reports the decoded bytes' length and SHA-256: the server gets the
/// original bytes, with `Content-Encoding` and without `Content-Length`, from memory, a file
/// and a stream; small and already-encoded bodies go as they are; a 415 sends it again plain.
@Suite("Request compression")
struct RequestCompressorTests {
    /// JSON-like text: compresses well, as an API's bodies do.
    static func jsonLike(_ count: Int) -> Data {
        var text = "["
        var index = 0
        while text.utf8.count < count {
            text += "{\"id\":\(index),\"name\":\"item \(index)\",\"tags\":[\"a\",\"b\"],\"ok\":\(index % 2 == 0)},"
            index += 1
        }
        return Data(text.utf8.prefix(count))
    }

    static func hex(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    static func post(_ server: TestServer, _ path: String = "/upload") -> URLRequest {
        var request = URLRequest(url: server.sessionURL(path))
        request.httpMethod = "POST"
        return request
    }

    /// Runs `task(recorder.handler)` and returns the task and its JSON answer.
    static func run(_ make: (@escaping @Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void) -> SessionTask)
        async -> (SessionTask, CompletionRecorder.Call?)
    {
        let recorder = CompletionRecorder()
        let task = make(recorder.handler)
        task.resume()
        await recorder.wait()
        return (task, recorder.first)
    }

    @Test(arguments: ContentCoding.allCases)
    func bytesAreCompressedAndArriveIntact(_ coding: ContentCoding) async throws {
        let body = Self.jsonLike(200_000)
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.interceptor = RequestCompressor(coding: coding)
            let (task, call) = await Self.run { manager.uploadTask(with: Self.post(server), from: body, completionHandler: $0) }
            #expect(call?.error == nil)
            let answer = call?.object as? JSONValue
            #expect(answer?["bytes"] == .int(Int64(body.count)))
            #expect(answer?["sha256"] == .string(Self.hex(body)))
            #expect(answer?["content_encoding"] == .string(coding.rawValue))
            #expect(answer?["content_length"] == .null)
            let encoded = answer?["encoded_bytes"]?.intValue ?? .max
            #expect(encoded < Int64(body.count) / 4, "\(encoded) bytes on the wire")
            #expect(task.countOfBytesSent == encoded)
            #expect(task.snapshot.withLock { $0.requestBodyCoding?.coding } == coding)
        }
    }

    @Test func aFileAndAStreamAreCompressedAsTheyAreSent() async throws {
        let body = Self.jsonLike(3 << 20)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("compress-\(UUID().uuidString).json")
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.interceptor = Interceptor([RetryPolicy(), RequestCompressor(coding: .deflate, level: 1)])
            let (_, fileCall) = await Self.run { manager.uploadTask(with: Self.post(server), fromFile: file, completionHandler: $0) }
            let fileAnswer = fileCall?.object as? JSONValue
            #expect(fileCall?.error == nil)
            #expect(fileAnswer?["bytes"] == .int(Int64(body.count)))
            #expect(fileAnswer?["sha256"] == .string(Self.hex(body)))
            #expect(fileAnswer?["content_encoding"] == .string("deflate"))

            // A stream of a known length: the length is the original's, so it is dropped too.
            let stream = RequestBody.stream(length: Int64(body.count)) { writer in
                var offset = 0
                while offset < body.count {
                    let end = min(offset + 100_000, body.count)
                    try await writer.write(body[offset..<end])
                    offset = end
                }
            }
            let (_, streamCall) = await Self.run {
                manager.uploadTask(withStreamedRequest: Self.post(server), body: stream, completionHandler: $0)
            }
            let streamAnswer = streamCall?.object as? JSONValue
            #expect(streamCall?.error == nil)
            #expect(streamAnswer?["sha256"] == .string(Self.hex(body)))
            #expect(streamAnswer?["content_length"] == .null)
        }
    }

    @Test func overHTTP2TheCompressedBodyGoesAsDataFrames() async throws {
        let body = Self.jsonLike(256 << 10)
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionConfiguration()
            configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
            let manager = URLSessionManager(configuration: configuration)
            manager.interceptor = RequestCompressor()
            let (task, call) = await Self.run { manager.uploadTask(with: Self.post(server), from: body, completionHandler: $0) }
            #expect(call?.error == nil)
            #expect(task.metrics?.networkProtocolName == "h2")
            let answer = call?.object as? JSONValue
            #expect(answer?["sha256"] == .string(Self.hex(body)))
            #expect(answer?["content_encoding"] == .string("gzip"))
            #expect(answer?["content_length"] == .null)
        }
    }

    /// An incompressible body well past the stream window over HTTP/2: many DATA batches.
    @Test func overHTTP2ALongCompressedBodyArrivesWhole() async throws {
        var generator = SystemRandomNumberGenerator()
        let body = Data((0..<(512 << 10)).map { _ in UInt8.random(in: 0...255, using: &generator) })  // incompressible
        try await TestServer.withRunning(.init(tls: .valid)) { server in
            var configuration = SessionConfiguration()
            configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
            let manager = URLSessionManager(configuration: configuration)
            manager.interceptor = RequestCompressor()
            let (_, call) = await Self.run { manager.uploadTask(with: Self.post(server), from: body, completionHandler: $0) }
            #expect(call?.error == nil)
            #expect((call?.object as? JSONValue)?["sha256"] == .string(Self.hex(body)))
        }
    }

    @Test func smallEncodedAndDeclinedBodiesGoAsTheyAre() async throws {
        let body = Self.jsonLike(5_000)
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.interceptor = RequestCompressor(minimumSize: 10_000)
            let (_, small) = await Self.run { manager.uploadTask(with: Self.post(server), from: body, completionHandler: $0) }
            let smallAnswer = small?.object as? JSONValue
            #expect(smallAnswer?["sha256"] == .string(Self.hex(body)))
            #expect(smallAnswer?["content_encoding"] == nil)

            // Already gzip: sent untouched (the server inflates the caller's own gzip).
            var request = Self.post(server)
            request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
            let big = Self.jsonLike(50_000)
            let callerGzip = try Self.gzip(big)
            let (task, encoded) = await Self.run {
                manager.uploadTask(with: request, from: callerGzip, completionHandler: $0)
            }
            let encodedAnswer = encoded?.object as? JSONValue
            #expect(encodedAnswer?["sha256"] == .string(Self.hex(big)))
            #expect(encodedAnswer?["encoded_bytes"] == .int(Int64(callerGzip.count)))
            #expect(encodedAnswer?["content_length"] == .string(String(callerGzip.count)))
            #expect(task.snapshot.withLock { $0.requestBodyCoding } == nil)

            let declining = URLSessionManager()
            declining.interceptor = RequestCompressor(shouldCompress: { $0.url?.path != "/upload" })
            let (_, declined) = await Self.run { declining.uploadTask(with: Self.post(server), from: big, completionHandler: $0) }
            #expect((declined?.object as? JSONValue)?["content_encoding"] == nil)
        }
    }

    @Test func a415IsRetriedUncompressedAndTheOriginRemembered() async throws {
        let body = Self.jsonLike(20_000)
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            let compressor = RequestCompressor()
            manager.interceptor = compressor
            let (first, call) = await Self.run {
                manager.uploadTask(with: Self.post(server, "/status/415"), from: body, completionHandler: $0)
            }
            #expect(call?.response?.statusCode == 415)
            #expect(first.retryCount == 1)
            #expect(first.snapshot.withLock { $0.requestBodyCoding } == nil, "the retry went uncompressed")
            #expect(compressor.hasRefused(server.sessionURL("/upload")))

            // Later requests to that origin are plain from the start; the retry is not repeated.
            let (second, upload) = await Self.run { manager.uploadTask(with: Self.post(server), from: body, completionHandler: $0) }
            #expect(second.retryCount == 0)
            #expect((upload?.object as? JSONValue)?["content_encoding"] == nil)
            #expect((upload?.object as? JSONValue)?["sha256"] == .string(Self.hex(body)))
        }
    }

    /// `data` gzipped, by the engine's streaming compressor.
    static func gzip(_ data: Data) throws -> Data {
        let deflater = try BodyDeflater(coding: .gzip, level: 6)
        let pieces = try deflater.deflate(ByteBuffer(bytes: data)) + deflater.finish()
        return pieces.reduce(into: Data()) { $0.append(contentsOf: $1.readableBytesView) }
    }
}
