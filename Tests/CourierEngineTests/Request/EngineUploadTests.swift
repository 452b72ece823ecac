#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierEngine
import CourierTestServer
import Crypto
import Foundation
import NIOCore
import Synchronization
import Testing

/// Large uploads as a user sees them: every byte arrives (the test server's `/upload` answers
/// the count and SHA-256), progress comes in order, ends exactly at the total and arrives a
/// bounded number of times (not once per 64 KiB chunk), a peer that stops reading stops the
/// producer, and a paused upload stops producing.
@Suite("HTTPEngine uploads")
struct EngineUploadTests {
    private static let chunk = ByteBuffer(repeating: 0x5a, count: 64 * 1024)
    private static let size = 64 << 20

    /// At most one report per 1 % of the body, plus the first, plus one per 100 ms elapsed.
    private static func progressBound(elapsed: TimeInterval) -> Int {
        102 + Int(elapsed / 0.1)
    }

    @Test(arguments: [true, false])
    func streamed64MiBUploadHasOrderedExactAndBoundedProgress(knownLength: Bool) async throws {
        let chunks = Self.size / Self.chunk.readableBytes
        try await withEngine { engine, server in
            let recorder = EventRecorder()
            let body = RequestBody.stream(length: knownLength ? Int64(Self.size) : nil) { writer in
                for _ in 0..<chunks { try await writer.write(Self.chunk) }
            }
            let start = Date()
            engine.execute(EngineRequest(method: "POST", url: server.url("/upload"), body: body)) { recorder.record($0) }
            await recorder.waitForEnd()
            let elapsed = Date().timeIntervalSince(start)
            #expect(recorder.failure == nil)
            let outcome = try UploadOutcome(recorder)
            let (progress, bytes, sha256) = (outcome.progress, outcome.bytes, outcome.sha256)
            #expect(bytes == Self.size)
            #expect(sha256 == UploadOutcome.sha256(of: Self.chunk, times: chunks))
            #expect(progress.last == Int64(Self.size))
            #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 < $1 }, "progress goes strictly up")
            #expect(progress.count <= Self.progressBound(elapsed: elapsed), "\(progress.count) reports in \(elapsed) s")
            #expect(progress.count < chunks)
        }
    }

    @Test func file64MiBUploadHasOrderedExactAndBoundedProgress() async throws {
        let chunks = Self.size / Self.chunk.readableBytes
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID()).bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let file = try #require(FileHandle(forWritingAtPath: path))
        for _ in 0..<chunks { file.write(Data(Self.chunk.readableBytesView)) }
        try file.close()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await withEngine { engine, server in
            let recorder = EventRecorder()
            let start = Date()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: path))) {
                recorder.record($0)
            }
            await recorder.waitForEnd()
            let elapsed = Date().timeIntervalSince(start)
            #expect(recorder.failure == nil)
            let outcome = try UploadOutcome(recorder)
            let (progress, bytes, sha256) = (outcome.progress, outcome.bytes, outcome.sha256)
            #expect(bytes == Self.size)
            #expect(sha256 == UploadOutcome.sha256(of: Self.chunk, times: chunks))
            #expect(progress.last == Int64(Self.size))
            #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 < $1 }, "progress goes strictly up")
            #expect(progress.count <= Self.progressBound(elapsed: elapsed), "\(progress.count) reports in \(elapsed) s")
        }
    }

    /// A file body whose path is replaced while the request waits for a connection is refused
    /// with ``EngineError/invalidBody(_:)``, never sent from the file now at the path (another
    /// file's bytes, or a FIFO that would block a thread in `open` until a writer came): the
    /// file is checked when the request is made and recognized (device, inode, change time) when it is
    /// opened to be sent. Waiting requests hold no descriptor of it (hundreds of queued uploads
    /// must not use up the process's files).
    @Test(arguments: ["fifo", "other file"])
    func aFileReplacedWhileTheRequestWaitsIsRefusedNotSent(replacement: String) async throws {
        let chunk = ByteBuffer(repeating: 0x41, count: 100 << 10)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-swapped-\(UUID()).bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(chunk.readableBytesView)))
        defer {
            // A reader stuck opening the FIFO (a bug) is let go: a writer appears, then leaves.
            let writer = open(path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            unlink(path)
        }
        var configuration = EngineConfiguration()
        configuration.maximumConnectionsPerHost = 1
        try await withEngine(engine: configuration) { engine, server in
            let first = EventRecorder()
            engine.execute(EngineRequest(url: server.url("/delay/1"))) { first.record($0) }
            #expect(await eventually { server.requestsReceived(forPath: "/delay/1") == 1 })
            let queued = (0..<20).map { _ in EventRecorder() }
            for recorder in queued {
                let upload = EngineRequest(method: "PUT", url: server.url("/upload"), body: .file(path: path), idleTimeout: .seconds(5))
                engine.execute(upload) { recorder.record($0) }
            }
            #expect(Self.openDescriptors(of: path) == 0, "queued uploads hold descriptors of their file")
            // Queued behind the first request (one connection): the path now names something else.
            #expect(unlink(path) == 0)
            if replacement == "fifo" {
                #expect(mkfifo(path, 0o600) == 0)
            } else {
                #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x42, count: 100 << 10)))
            }
            await first.waitForEnd()
            for recorder in queued {
                await recorder.waitForEnd()
                guard case .invalidBody(let reason) = recorder.failure else {
                    Issue.record("expected invalidBody, got \(String(describing: recorder.failure))")
                    continue
                }
                #expect(reason.contains("was replaced") || reason.contains("is not a regular file"), "\(reason)")
            }
            #expect(server.requestsReceived(forPath: "/upload") <= queued.count)
        }
    }

    /// How many of this process's descriptors are open on `path` (Linux: /proc/self/fd).
    private static func openDescriptors(of path: String) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }.count
    }

    /// A file body's path, offset and length in the forms a careless or hostile caller gives
    /// them each end the request with ``EngineError/invalidBody(_:)`` (no crash, no hang, no
    /// other file sent). A path with a NUL byte would reach `open` cut at the NUL, naming
    /// another file (here: the real one before it), so it is refused, not sent.
    @Test func hostileFileBodiesEndWithInvalidBody() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-hostile-\(UUID()).bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x42, count: 1024)))
        defer { unlink(path) }
        let bodies: [(body: RequestBody, what: String)] = [
            (.file(path: path + "\u{0}.other"), "a NUL in the path"),
            (.file(path: path, offset: .max, length: 10), "an offset past any file"),
            (.file(path: path, offset: 0, length: 1 << 40), "a length past the end"),
            (.file(path: path, offset: -1), "a negative offset"),
            (.file(path: path, length: -1), "a negative length"),
            (.file(path: "/dev/zero"), "a device"),
            (.file(path: FileManager.default.temporaryDirectory.path), "a directory"),
            (.file(path: path + ".missing"), "a missing file"),
        ]
        try await withEngine { engine, server in
            for (body, what) in bodies {
                let recorder = EventRecorder()
                let request = EngineRequest(method: "PUT", url: server.url("/upload"), body: body, idleTimeout: .seconds(5))
                engine.execute(request) { recorder.record($0) }
                await recorder.waitForEnd()
                guard case .invalidBody? = recorder.failure else {
                    Issue.record("\(what): ended with \(String(describing: recorder.failure)), not invalidBody")
                    continue
                }
            }
        }
    }

    /// A stream body declared with a negative length (a caller's `Content-Length: -5` on a
    /// body stream ends up here) is refused before anything is sent: the length becomes the
    /// request's `Content-Length` (over HTTP/2 the HEADERS frame's `content-length`), and a
    /// head saying `-5` is not HTTP (RFC 9110 §8.6: digits only; a server or proxy may frame
    /// what follows as it likes). The producer never runs and no connection is opened; the
    /// engine serves the key afterwards. (Over HTTP/2, without the check, NIOHTTP2's
    /// ContentLengthHeaderNegative surfaced as the server's fault.)
    @Test(arguments: [(Int64(-1), false), (-5, false), (Int64.min, false), (-7, true)])
    func aStreamBodyWithANegativeLengthIsRefusedBeforeTheHead(length: Int64, http2: Bool) async throws {
        var configuration = EngineConfiguration()
        if http2 { configuration.httpVersion = .http2PriorKnowledge }
        let server: TestServer.Configuration = http2 ? .init(http2: .init(cleartext: true)) : .init()
        try await withEngine(server: server, engine: configuration) { engine, server in
            let produced = Mutex(false)
            let body = RequestBody.stream(length: length) { writer in
                produced.withLock { $0 = true }
                try await writer.write(ByteBuffer(string: "x"))
            }
            let recorder = EventRecorder()
            engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: body, idleTimeout: .seconds(5))) {
                recorder.record($0)
            }
            await recorder.waitForEnd()
            guard case .invalidBody(let reason)? = recorder.failure else {
                Issue.record("ended with \(String(describing: recorder.failure)), not invalidBody")
                return
            }
            #expect(reason.contains("\(length)"), "\(reason)")
            #expect(!produced.withLock { $0 }, "the producer ran")
            #expect(server.requestsReceived(forPath: "/upload") == 0, "the head was sent")
            #expect(engine.openConnectionCount == 0, "a connection was opened for a refused request")
            let response = try await engine.collect(
                EngineRequest(method: "PUT", url: server.url("/upload"), body: .stream(length: 2) { try await $0.write(ByteBuffer(string: "ok")) }))
            #expect(response.head.status == .ok)
        }
    }

    /// Declared lengths at the edges, over HTTP/1.1 and HTTP/2: `Int64.max` with a one-byte
    /// body and 0 with a one-byte body fail with invalidBody naming the announced length (not
    /// a hang, a trap or a body the server frames wrongly) — or, for 0, succeed with the server
    /// having read nothing when it answered before the producer wrote (the request was complete
    /// after its head; seen in a full run); 0 with no bytes and nil (chunked) succeed with
    /// exactly what was written.
    @Test(arguments: [false, true])
    func streamLengthsAtTheEdges(http2: Bool) async throws {
        var configuration = EngineConfiguration()
        if http2 { configuration.httpVersion = .http2PriorKnowledge }
        let server: TestServer.Configuration = http2 ? .init(http2: .init(cleartext: true)) : .init()
        try await withEngine(server: server, engine: configuration) { engine, server in
            for (length, bytes) in [(Int64.max, "x"), (Int64(0), "x")] {
                let recorder = EventRecorder()
                let body = RequestBody.stream(length: length) { writer in try await writer.write(ByteBuffer(string: bytes)) }
                engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: body, idleTimeout: .seconds(5))) {
                    recorder.record($0)
                }
                await recorder.waitForEnd()
                // Announced 0, the request is complete after its head: the server may answer
                // before the producer writes its byte. Then what it read is what was announced.
                if length == 0, recorder.failure == nil {
                    let outcome = try UploadOutcome(recorder)
                    #expect(outcome.bytes == 0, "length 0: the server read \(String(describing: outcome.bytes)) bytes")
                    continue
                }
                guard case .invalidBody(let reason)? = recorder.failure else {
                    Issue.record("length \(length): ended with \(String(describing: recorder.failure)), not invalidBody")
                    continue
                }
                #expect(reason.contains("\(length)"), "\(reason)")
            }
            for (length, bytes) in [(Int64(0), ""), (nil, "abc")] as [(Int64?, String)] {
                let recorder = EventRecorder()
                let body = RequestBody.stream(length: length) { writer in
                    if !bytes.isEmpty { try await writer.write(ByteBuffer(string: bytes)) }
                }
                engine.execute(EngineRequest(method: "PUT", url: server.url("/upload"), body: body, idleTimeout: .seconds(5))) {
                    recorder.record($0)
                }
                await recorder.waitForEnd()
                #expect(recorder.failure == nil, "length \(String(describing: length)): \(String(describing: recorder.failure))")
                let outcome = try UploadOutcome(recorder)
                #expect(outcome.bytes == bytes.utf8.count, "length \(String(describing: length))")
            }
        }
    }

    @Test func aPeerThatStopsReadingStopsTheProducer() async throws {
        let listener = try NonReadingListener()
        defer { listener.close() }
        let engine = try HTTPEngine()
        let produced = Mutex<Int64>(0)
        let producerEnded = Mutex(false)
        let body = RequestBody.stream(length: nil) { writer in
            defer { producerEnded.withLock { $0 = true } }
            while true {
                try await writer.write(Self.chunk)
                produced.withLock { $0 += Int64(Self.chunk.readableBytes) }
            }
        }
        let recorder = EventRecorder()
        let url = try #require(URL(string: "http://127.0.0.1:\(listener.port)/upload"))
        let task = engine.execute(EngineRequest(method: "POST", url: url, body: body)) { recorder.record($0) }
        let (last, held) = try await waitUntilProducerIsHeld(attempts: 200) { produced.withLock { $0 } }
        #expect(held, "the producer never stopped: \(last) bytes")
        // Kernel buffers on loopback (a few MiB) plus the engine's bounded queue.
        #expect(last < 24 << 20, "the producer got \(last) bytes past a peer that reads nothing")
        task.cancel()
        await recorder.waitForEnd()
        #expect(recorder.failure == .cancelled)
        #expect(await eventually { producerEnded.withLock { $0 } })
        await engine.shutdown()
    }

    @Test func pausedUploadStopsProducingAndResumeFinishesIt() async throws {
        let chunks = Self.size / Self.chunk.readableBytes
        try await withEngine { engine, server in
            let produced = Mutex<Int64>(0)
            let body = RequestBody.stream(length: Int64(Self.size)) { writer in
                for _ in 0..<chunks {
                    try await writer.write(Self.chunk)
                    produced.withLock { $0 += Int64(Self.chunk.readableBytes) }
                }
            }
            let recorder = EventRecorder()
            let task = engine.execute(EngineRequest(method: "POST", url: server.url("/upload"), body: body)) {
                recorder.record($0)
            }
            task.pause()
            // Let a write that was already under way land, then the count must hold.
            try await Task.sleep(for: .milliseconds(500))
            let whilePaused = produced.withLock { $0 }
            try await Task.sleep(for: .milliseconds(700))
            #expect(produced.withLock { $0 } == whilePaused)
            #expect(whilePaused < Int64(Self.size))
            task.resume()
            await recorder.waitForEnd()
            #expect(recorder.failure == nil)
            let outcome = try UploadOutcome(recorder)
            let (progress, bytes, sha256) = (outcome.progress, outcome.bytes, outcome.sha256)
            #expect(bytes == Self.size)
            #expect(sha256 == UploadOutcome.sha256(of: Self.chunk, times: chunks))
            #expect(progress.last == Int64(Self.size))
        }
    }
}

/// A loopback listener that never accepts nor reads: its small receive buffer fills, then the
/// client's send buffer, then the client must stop.
private final class NonReadingListener: Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        (descriptor, port) = try SmallBufferListenerSocket.open()
    }

    func close() { Glibc.close(descriptor) }
}
