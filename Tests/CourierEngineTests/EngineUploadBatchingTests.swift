#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierTestServer
import Crypto
import Foundation
import NIOCore
import Synchronization
import Testing

@testable import CourierEngine

/// How a streamed body reaches the socket: in large batches (one `writev` per writability
/// window, not one per 128 KiB), with the bytes the engine holds itself bounded whatever the
/// peer does.
@Suite("HTTPEngine upload batching")
struct EngineUploadBatchingTests {
    private static let chunk = ByteBuffer(repeating: 0xa5, count: 64 * 1024)

    @Test func a64MiBStreamReachesTheSocketInLargeBatches() async throws {
        let size = 64 << 20
        let chunks = size / Self.chunk.readableBytes
        try await withEngine { engine, server in
            let recorder = EventRecorder()
            let body = RequestBody.stream(length: Int64(size)) { writer in
                for _ in 0..<chunks { try await writer.write(Self.chunk) }
            }
            let task = engine.execute(EngineRequest(method: "POST", url: server.url("/upload"), body: body)) {
                recorder.record($0)
            }
            await recorder.waitForEnd()
            #expect(recorder.failure == nil)
            let outcome = try UploadOutcome(recorder)
            #expect(outcome.bytes == size)
            #expect(outcome.sha256 == UploadOutcome.sha256(of: Self.chunk, times: chunks))
            let progress = outcome.progress
            #expect(progress.last == Int64(size))
            // NIO's default write buffer (64 KiB) made every flush carry at most two chunks:
            // at least 512 batches for 64 MiB. A writability window of 1 MiB hands the socket
            // 512 KiB or more per flush (the channel turns writable again at 512 KiB), except
            // when the producer falls behind and the queue runs dry: 256 leaves that slack.
            let batches = task.execution.bodyWriteBatches.load(ordering: .relaxed)
            #expect(batches > 0)
            #expect(batches <= 256, "64 MiB reached the socket in \(batches) flushes")
        }
    }

    /// A peer that accepts and never reads: once the producer is held, the bytes it handed the
    /// engine minus those in the kernel (the engine's socket send queue and the peer's receive
    /// queue) are what the engine holds itself, bounded by its pipe and its write buffer.
    @Test func aPeerThatStopsReadingLeavesABoundedBodyInTheEngine() async throws {
        let listener = try AcceptingNonReader()
        defer { listener.close() }
        let engine = try HTTPEngine()
        let produced = Mutex<Int64>(0)
        let body = RequestBody.stream(length: nil) { writer in
            while true {
                try await writer.write(Self.chunk)
                produced.withLock { $0 += Int64(Self.chunk.readableBytes) }
            }
        }
        let recorder = EventRecorder()
        let url = try #require(URL(string: "http://127.0.0.1:\(listener.port)/upload"))
        let task = engine.execute(EngineRequest(method: "POST", url: url, body: body)) { recorder.record($0) }
        let accepted = try #require(await listener.accept(), "the engine never connected")
        let (last, held) = try await waitUntilProducerIsHeld(attempts: 600) { produced.withLock { $0 } }
        #expect(held, "the producer never stopped: \(last) bytes")
        let clientSocket = try #require(
            AcceptingNonReader.descriptor(localPort: accepted.peerPort, peerPort: UInt16(listener.port)),
            "the engine's socket (local port \(accepted.peerPort)) is not among this process's descriptors"
        )
        let inKernel = Int64(AcceptingNonReader.queued(clientSocket, AcceptingNonReader.sendQueue))
            + Int64(AcceptingNonReader.queued(accepted.descriptor, AcceptingNonReader.receiveQueue))
        let inEngine = last - inKernel
        let bound = Int64(RequestBodyPipe.highWater + HTTP1ConnectionHandler.uploadWriteWaterMark.high)
            + 2 * Int64(Self.chunk.readableBytes)
        #expect(inKernel > 0)
        #expect(inEngine <= bound, "the engine holds \(inEngine) bytes (\(last) produced, \(inKernel) in the kernel)")
        task.cancel()
        await recorder.waitForEnd()
        #expect(recorder.failure == .cancelled)
        await engine.shutdown()
    }
}

/// A loopback listener with a small receive buffer that accepts one connection and never reads.
private final class AcceptingNonReader: Sendable {
    let descriptor: Int32
    let port: Int
    private let acceptedDescriptor = Mutex<Int32?>(nil)

    init() throws {
        (descriptor, port) = try SmallBufferListenerSocket.open()
    }

    /// Accepts the engine's connection (on a thread of its own, waiting up to 120 s); nil when
    /// none came.
    func accept() async -> (descriptor: Int32, peerPort: UInt16)? {
        let listening = descriptor
        let fd: Int32 = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var entry = pollfd(fd: listening, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 120_000) == 1 else { return continuation.resume(returning: -1) }
                continuation.resume(returning: Glibc.accept(listening, nil, nil))
            }
        }
        guard fd >= 0, let peerPort = Self.port(of: fd, peer: true) else { return nil }
        acceptedDescriptor.withLock { $0 = fd }
        return (fd, peerPort)
    }

    func close() {
        Glibc.close(descriptor)
        if let fd = acceptedDescriptor.withLock({ $0 }) { Glibc.close(fd) }
    }

    /// The local (or peer) IPv4 port of socket `fd`.
    static func port(of fd: Int32, peer: Bool) -> UInt16? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return UInt16(bigEndian: address.sin_port)
    }

    /// This process's IPv4 socket from local port `localPort` to `peerPort` (the engine's end).
    static func descriptor(localPort: UInt16, peerPort: UInt16) -> Int32? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        for name in names {
            guard let fd = Int32(name), Self.port(of: fd, peer: false) == localPort, Self.port(of: fd, peer: true) == peerPort
            else { continue }
            return fd
        }
        return nil
    }

    /// Linux's `SIOCOUTQ` (`TIOCOUTQ`): bytes in a TCP socket's send queue, unsent or unacknowledged.
    static let sendQueue: UInt = 0x5411
    /// Linux's `SIOCINQ` (`FIONREAD`): bytes in a TCP socket's receive queue, not yet read.
    static let receiveQueue: UInt = 0x541B

    /// Bytes in a socket's queue (`sendQueue` or `receiveQueue`); 0 when the call fails.
    static func queued(_ fd: Int32, _ request: UInt) -> Int32 {
        var count: Int32 = 0
        guard ioctl(fd, request, &count) == 0 else { return 0 }
        return count
    }
}
