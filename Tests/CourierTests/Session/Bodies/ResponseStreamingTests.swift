import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import Courier

/// `URLSessionManager.bytes(for:)`: the body as an async sequence of chunks, with
/// backpressure, through the same task machinery as data tasks.
@Suite("Response streaming")
struct ResponseStreamingTests {
    /// The process's resident set, in bytes (Linux), or nil.
    static func residentBytes() -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kib = line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }
            return kib.map { $0 * 1024 }
        }
        return nil
    }

    @Test func aLargeBodyIsConsumedChunkByChunkInBoundedMemory() async throws {
        try await TestServer.withRunning { server in
            // The limit for data tasks does not apply to a stream.
            var configuration = SessionConfiguration()
            configuration.maximumResponseBodySize = 1 << 20
            let manager = URLSessionManager(configuration: configuration)
            let size: Int64 = 1 << 30
            let (response, body) = try await manager.bytes(for: URLRequest(url: server.sessionURL("/download/\(size)")))
            #expect(response.statusCode == 200)
            #expect(response.expectedContentLength == size)
            let start = Self.residentBytes() ?? 0
            var peak = start
            var received: Int64 = 0
            var chunks = 0
            var lastByte: UInt8 = 0
            for try await chunk in body {
                received += Int64(chunk.count)
                chunks += 1
                lastByte = chunk.last ?? lastByte
                if chunks % 64 == 0 { peak = max(peak, Self.residentBytes() ?? 0) }
            }
            #expect(received == size)
            #expect(chunks > 1)
            // `abc…z` repeated: the last byte is at offset size - 1.
            #expect(lastByte == UInt8(ascii: "a") + UInt8((size - 1) % 26))
            // The stream never held much more than its high watermark (plus what was in flight
            // when reading paused)...
            #expect(body.peakBufferedBytes < ResponseBodyStream.highWatermark + (8 << 20), "\(body.peakBufferedBytes) bytes")
            // ...and the process did not grow by anything like the body (other suites running in
            // the same process move its resident set too: the bound is generous).
            #expect(peak - start < 512 << 20, "the resident set grew by \((peak - start) >> 20) MiB")
            try await eventually { manager.tasks.isEmpty }
        }
    }

    @Test func aSlowConsumerPausesTheServerAndCancellingTheConsumerCancelsTheRequest() async throws {
        let server = try await BulkServer.start(bodySize: 1 << 30)
        let manager = URLSessionManager()
        let completed = CompletionRecorder()
        manager.setTaskDidCompleteBlock { _, error in completed.handler(nil, nil, error) }
        let (response, body) = try await manager.bytes(for: URLRequest(url: server.url))
        #expect(response.statusCode == 200)
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let consumed = Mutex<Int64>(0)
        let consumer = Task {
            var first = true
            for try await chunk in body {
                consumed.withLock { $0 += Int64(chunk.count) }
                if first {
                    first = false
                    // Stop taking chunks until the test lets go (it never does: it cancels).
                    await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
                }
            }
        }
        try await eventually { gate.withLock { $0 != nil } }
        // The server can only write what the socket buffers and the stream's high watermark
        // take: far less than the 1 GiB it has to send.
        let sent = try await settled { server.bytesSent }
        #expect(sent < 64 << 20, "the server sent \(sent >> 20) MiB to a consumer that stopped")
        #expect(sent > 0)
        #expect(!server.sawClose)
        consumer.cancel()
        gate.withLock { continuation in
            continuation?.resume()
            continuation = nil
        }
        let result = await consumer.result
        #expect(throws: CourierError.self) { try result.get() }
        await completed.wait()
        guard case .cancelled = completed.first?.error as? CourierError else {
            Issue.record("the task ended with \(String(describing: completed.first?.error))")
            return
        }
        try await eventually { server.sawClose }
        try await eventually { manager.tasks.isEmpty }
        #expect(completed.all.count == 1)
        #expect(server.bytesSent < 1 << 30)
        try await server.shutdown()
    }

    @Test func droppingTheIterationEarlyCancelsTheRequest() async throws {
        let server = try await BulkServer.start(bodySize: 1 << 30)
        let manager = URLSessionManager()
        let (_, body) = try await manager.bytes(for: URLRequest(url: server.url))
        for try await chunk in body where !chunk.isEmpty {
            break
        }
        try await eventually { server.sawClose }
        try await eventually { manager.tasks.isEmpty }
        try await server.shutdown()
    }

    @Test func redirectsAuthenticationAndNotificationsApply() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.credential = URLCredential(user: "user", password: "secret", persistence: .forSession)
            let completions = CompletionRecorder()
            manager.setTaskDidCompleteBlock { task, error in completions.handler(task.response, nil, error) }

            let (redirected, redirectedBody) = try await manager.bytes(for: URLRequest(url: server.sessionURL("/redirect/2")))
            #expect(redirected.statusCode == 200)
            #expect(redirected.url?.path == "/get")
            var text = Data()
            for try await chunk in redirectedBody { text.append(chunk) }
            #expect(String(decoding: text, as: UTF8.self).contains("\"url\""))
            await completions.wait()
            #expect(completions.first?.error == nil)

            let (authenticated, authenticatedBody) = try await manager.bytes(
                for: URLRequest(url: server.sessionURL("/basic-auth/user/secret")))
            #expect(authenticated.statusCode == 200)
            var json = Data()
            for try await chunk in authenticatedBody { json.append(chunk) }
            #expect(String(decoding: json, as: UTF8.self).contains("\"authenticated\""))

            // No serializer runs: an error status is the caller's to read, with its body.
            let (missing, missingBody) = try await manager.bytes(for: URLRequest(url: server.sessionURL("/status/404")))
            #expect(missing.statusCode == 404)
            for try await _ in missingBody {}
            try await eventually { completions.all.count == 3 }
            #expect(completions.all.allSatisfy { $0.error == nil })
        }
    }

    @Test func anInvalidatedManagerFailsTheStreamInsteadOfHanging() async throws {
        try await TestServer.withRunning { server in
            let manager = URLSessionManager()
            manager.invalidateSessionCancelingTasks(false, resetSession: false)
            let url = server.sessionURL("/get")
            // A hang bound, not a timing assertion: the call must end (with an error).
            let outcome = try await withThrowingTaskGroup(of: String.self) { group in
                group.addTask {
                    do {
                        _ = try await manager.bytes(for: URLRequest(url: url))
                        return "succeeded"
                    } catch {
                        return "\(error)"
                    }
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(30))
                    return "hung"
                }
                let first = try await group.next() ?? "nothing"
                group.cancelAll()
                return first
            }
            #expect(outcome == "cancelled")
            #expect(server.connectionsAccepted == 0)
        }
    }

    @Test func aFailureBeforeTheHeadIsThrown() async throws {
        let manager = URLSessionManager()
        // Port 1 on loopback: nothing listens there. (A port freed by a stopped server could be
        // taken by another suite's server in a parallel run: that answered, and nothing threw.)
        let url = try #require(URL(string: "http://127.0.0.1:1/get"))
        await #expect(throws: CourierError.self) { _ = try await manager.bytes(for: URLRequest(url: url)) }
        try await eventually { manager.tasks.isEmpty }
    }
}

/// A raw HTTP server that answers any request with a `bodySize`-byte body, written only while
/// the socket is writable, and counts the bytes the kernel accepted: when the client stops
/// reading, the count stops growing.
final class BulkServer: Sendable {
    private let channel: any Channel
    private let counters: Counters
    let url: URL

    final class Counters: Sendable {
        let sent = Mutex<Int64>(0)
        let closed = Mutex(false)
    }

    var bytesSent: Int64 { counters.sent.withLock { $0 } }
    var sawClose: Bool { counters.closed.withLock { $0 } }

    private init(channel: any Channel, counters: Counters, url: URL) {
        self.channel = channel
        self.counters = counters
        self.url = url
    }

    static func start(bodySize: Int64) async throws -> BulkServer {
        let counters = Counters()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Sender(bodySize: bodySize, counters: counters))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port, let url = URL(string: "http://127.0.0.1:\(port)/bulk") else {
            throw NoPort()
        }
        return BulkServer(channel: channel, counters: counters, url: url)
    }

    func shutdown() async throws {
        try await channel.close()
    }

    struct NoPort: Error {}

    private final class Sender: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let counters: Counters
        var remaining: Int64
        var request = ""
        var started = false
        let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 << 10)

        init(bodySize: Int64, counters: Counters) {
            self.remaining = bodySize
            self.counters = counters
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            request += buffer.readString(length: buffer.readableBytes) ?? ""
            guard !started, request.contains("\r\n\r\n") else { return }
            started = true
            let head = "HTTP/1.1 200 OK\r\nContent-Length: \(remaining)\r\nContent-Type: application/octet-stream\r\n\r\n"
            context.write(wrapOutboundOut(ByteBuffer(string: head)), promise: nil)
            pump(context)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if started { pump(context) }
            context.fireChannelWritabilityChanged()
        }

        func channelInactive(context: ChannelHandlerContext) {
            counters.closed.withLock { $0 = true }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        private func pump(_ context: ChannelHandlerContext) {
            let counters = self.counters
            while context.channel.isWritable, remaining > 0 {
                let size = Int(min(Int64(chunk.readableBytes), remaining))
                remaining -= Int64(size)
                let promise = context.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenSuccess { counters.sent.withLock { $0 += Int64(size) } }
                context.writeAndFlush(wrapOutboundOut(chunk.getSlice(at: 0, length: size) ?? chunk), promise: promise)
            }
        }
    }
}
