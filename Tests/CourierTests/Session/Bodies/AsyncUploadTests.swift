@testable import Courier
import CourierTestServer
import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// Uploads awaited: from `Data`, a file, an async sequence of chunks or of bytes, a multipart
/// form; each returns a handle whose upload progress is an async sequence ending at the body's
/// size, and whose result is the server's answer without an `HTTPURLResponse` made for it.
@Suite("async uploads")
struct AsyncUploadTests {
    /// What `/upload` answers: the byte count and SHA-256 of the body it read.
    struct Received: Decodable, Sendable, Equatable {
        let bytes: Int
        let sha256: String
    }

    /// Deterministic bytes: `count` of them, chunk `index` filled with its own pattern.
    static func bytes(_ count: Int, seed: UInt8 = 7) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    static func expected(_ data: Data) -> Received {
        Received(bytes: data.count, sha256: SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined())
    }

    /// Every value of `progress`, in order.
    static func collect(_ progress: TransferProgressSequence) -> Task<[TransferProgress], Never> {
        Task {
            var seen: [TransferProgress] = []
            for await value in progress { seen.append(value) }
            return seen
        }
    }

    static func expectRisingToTotal(_ seen: [TransferProgress], total: Int64, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(seen.last?.completedUnitCount == total, "last progress \(String(describing: seen.last))", sourceLocation: sourceLocation)
        #expect(seen.last?.fractionCompleted == 1.0 || total <= 0, sourceLocation: sourceLocation)
        let counts = seen.map(\.completedUnitCount)
        #expect(counts == counts.sorted(), "progress went backwards: \(counts)", sourceLocation: sourceLocation)
    }

    @Test("upload(Data): the server gets the bytes, progress ends at the size, no HTTPURLResponse is made")
    func uploadData() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let body = Self.bytes(3 << 20)
            let upload = try manager.upload(body, to: "upload")
            let progress = Self.collect(upload.uploadProgress)
            let answer = try await upload.decoded(as: Received.self)
            #expect(answer.status == .ok)
            #expect(answer.value == Self.expected(body))
            Self.expectRisingToTotal(await progress.value, total: Int64(body.count))
            #expect(upload.task is UploadTask)
            #expect(upload.task.snapshot.withLock { $0.responsesBuilt } == 0)
            // The raw body is there too, any number of times.
            let raw = try await upload.response
            #expect(raw.value.count > 0)
            #expect(try await upload.value == raw.value)
        }
    }

    @Test("upload(fileAt:): streamed from disk with Content-Length; progress ends at the file's size")
    func uploadFile() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let body = Self.bytes(5 << 20, seed: 3)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-async-upload-\(UUID().uuidString)")
            try body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let upload = try manager.upload(fileAt: file, to: "upload", method: "PUT")
            let progress = Self.collect(upload.uploadProgress)
            let answer = try await upload.decoded(as: Received.self)
            #expect(answer.value == Self.expected(body))
            #expect(upload.task.countOfBytesExpectedToSend == Int64(body.count))
            Self.expectRisingToTotal(await progress.value, total: Int64(body.count))

            // A missing file fails the transfer instead of hanging.
            let missing = try manager.upload(fileAt: file.appendingPathExtension("missing"), to: "upload")
            await #expect(throws: (any Error).self) { _ = try await missing.response }
        }
    }

    @Test("upload(AsyncSequence of Data): chunked without a length, Content-Length with one; every byte arrives")
    func uploadChunks() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let body = Self.bytes(4 << 20, seed: 11)
            let chunks = stride(from: 0, to: body.count, by: 100_000).map { body[$0..<min($0 + 100_000, body.count)] }

            let unknown = try manager.upload(Chunks(chunks: chunks.map { Data($0) }), to: "upload")
            let unknownProgress = Self.collect(unknown.uploadProgress)
            #expect(try await unknown.decoded(as: Received.self).value == Self.expected(body))
            #expect(await unknownProgress.value.last?.completedUnitCount == Int64(body.count))

            let known = try manager.upload(Chunks(chunks: chunks.map { Data($0) }), length: Int64(body.count), to: "upload")
            let knownProgress = Self.collect(known.uploadProgress)
            #expect(try await known.decoded(as: Received.self).value == Self.expected(body))
            Self.expectRisingToTotal(await knownProgress.value, total: Int64(body.count))
        }
    }

    @Test("upload(AsyncSequence of UInt8): single bytes are batched and all arrive")
    func uploadBytes() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let body = Self.bytes(300_001, seed: 5)
            let stream = AsyncStream<UInt8> { continuation in
                for byte in body { continuation.yield(byte) }
                continuation.finish()
            }
            let upload = try manager.upload(stream, to: "upload")
            #expect(try await upload.decoded(as: Received.self).value == Self.expected(body))
        }
    }

    @Test("a streamed upload asks for chunks only as the connection takes them: a suspended upload stops the producer")
    func streamedUploadHasBackpressure() async throws {
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let produced = Counter()
            // Up to 4 GiB on demand: without backpressure this would fill memory at once.
            let upload = try manager.upload(Endless(produced: produced, chunk: 256 << 10, limit: 4 << 30), to: "upload")
            try await eventually { upload.task.countOfBytesSent > 4 << 20 }
            upload.task.suspend()
            let whileSuspended = try await settled { produced.value }
            let sent = upload.task.countOfBytesSent
            #expect(whileSuspended - sent < 32 << 20, "produced \(whileSuspended) while \(sent) were sent")
            #expect(whileSuspended < 4 << 30)
            upload.cancel()
            do {
                _ = try await upload.response
                Issue.record("a cancelled upload succeeded")
            } catch CourierError.cancelled {
            }
        }
    }

    @Test("uploadMultipart: form fields and a file part reach the server; progress ends at the body's size")
    func multipart() async throws {
        struct Echo: Decodable, Sendable {
            let form: [String: String]
            let files: [String: String]
        }
        try await TestServer.withRunning { server in
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-async-part-\(UUID().uuidString).txt")
            try Data("file contents".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let upload = try manager.uploadMultipart(to: "post", parameters: ["title": "cat"]) { form in
                try form.appendPart(fileURL: file, name: "attachment")
                form.appendPart(formData: Data("42".utf8), name: "answer")
            }
            let progress = Self.collect(upload.uploadProgress)
            let echo = try await upload.decoded(as: Echo.self)
            #expect(echo.value.form["title"] == "cat")
            #expect(echo.value.form["answer"] == "42")
            #expect(echo.value.files["attachment"] == "file contents")
            let seen = await progress.value
            #expect(seen.last?.completedUnitCount == upload.task.countOfBytesSent)
            #expect((seen.last?.completedUnitCount ?? 0) > 13)

            // A 307 keeps the method and body: the form is read again for the second hop.
            let redirected = try manager.uploadMultipart(to: "redirect-to?url=%2Fpost&status_code=307", parameters: ["title": "dog"]) { form in
                try form.appendPart(fileURL: file, name: "attachment")
            }
            let second = try await redirected.decoded(as: Echo.self)
            #expect(second.url.path == "/post")
            #expect(second.value.form["title"] == "dog")
            #expect(second.value.files["attachment"] == "file contents")

            // A streamed body can't be sent twice: the same redirect fails clearly.
            let once = try manager.upload(Chunks(chunks: [Data("x".utf8)]), to: "redirect-to?url=%2Fpost&status_code=307")
            do {
                _ = try await once.response
                Issue.record("a consumed stream was sent again")
            } catch CourierError.requestBodyNotReplayable {
            }

            // A serialization error (a missing file) is thrown before anything is sent.
            #expect(throws: CourierError.self) {
                _ = try manager.uploadMultipart(to: "post") { form in
                    try form.appendPart(fileURL: file.appendingPathExtension("missing"), name: "x")
                }
            }
        }
    }
}

/// A counter shared with a producer.
final class Counter: Sendable {
    private let count = Mutex<Int64>(0)
    var value: Int64 { count.withLock { $0 } }
    func add(_ amount: Int) { count.withLock { $0 += Int64(amount) } }
}

/// Data chunks from an array, one at a time.
struct Chunks: AsyncSequence, Sendable {
    typealias Element = Data
    let chunks: [Data]
    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<Data>
        mutating func next() async -> Data? { remaining.popFirst() }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: chunks[...]) }
}

/// Chunks made on demand, counting what was produced, up to `limit` bytes.
struct Endless: AsyncSequence, Sendable {
    typealias Element = Data
    let produced: Counter
    let chunk: Int
    let limit: Int64
    struct AsyncIterator: AsyncIteratorProtocol {
        let produced: Counter
        let chunk: Data
        let limit: Int64
        mutating func next() async -> Data? {
            guard produced.value + Int64(chunk.count) <= limit else { return nil }
            produced.add(chunk.count)
            return chunk
        }
    }
    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(produced: produced, chunk: Data(repeating: 0x2A, count: chunk), limit: limit)
    }
}
