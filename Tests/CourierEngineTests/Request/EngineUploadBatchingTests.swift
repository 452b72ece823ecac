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
        let (body, produced) = Self.endlessBody()
        let recorder = EventRecorder()
        let url = try #require(URL(string: "http://127.0.0.1:\(listener.port)/upload"))
        let task = engine.execute(EngineRequest(method: "POST", url: url, body: body)) { recorder.record($0) }
        let accepted = try #require(await listener.accept(), "the engine never connected")
        let (last, held) = try await waitUntilProducerIsHeld(attempts: 600) { produced.count }
        #expect(held, "the producer never stopped: \(last) bytes")
        let clientSocket = try #require(
            AcceptingNonReader.descriptor(localPort: accepted.peerPort, peerPort: UInt16(listener.port)),
            "the engine's socket (local port \(accepted.peerPort)) is not among this process's descriptors"
        )
        let inKernel = Int64(AcceptingNonReader.queued(clientSocket, AcceptingNonReader.sendQueue))
            + Int64(AcceptingNonReader.queued(accepted.descriptor, AcceptingNonReader.receiveQueue))
        Self.expectBoundedInEngine(produced: last, inKernel: inKernel)
        task.cancel()
        await recorder.waitForEnd()
        #expect(recorder.failure == .cancelled)
        await engine.shutdown()
    }
}

extension EngineUploadBatchingTests {
    /// The same bound through TLS, against a Python server that completes the handshake and
    /// then never reads: NIOSSL keeps what the drain writes until a flush, so the channel's
    /// writability could not stop a drain turn before it had taken everything queued.
    @Test func aTLSPeerThatStopsReadingLeavesABoundedBodyInTheEngine() async throws {
        let peer = try TLSNonReader()
        defer { peer.stop() }
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        configuration.httpVersion = .http1Only
        let engine = try HTTPEngine(configuration: configuration)
        let (body, produced) = Self.endlessBody()
        let recorder = EventRecorder()
        let url = try #require(URL(string: "https://localhost:\(peer.port)/upload"))
        let task = engine.execute(EngineRequest(method: "POST", url: url, body: body)) { recorder.record($0) }
        let clientPort = try #require(await peer.nextLine().flatMap { UInt16($0) }, "no TLS connection")
        let (last, held) = try await waitUntilProducerIsHeld(attempts: 600) { produced.count }
        #expect(held, "the producer never stopped: \(last) bytes")
        let clientSocket = try #require(
            AcceptingNonReader.descriptor(localPort: clientPort, peerPort: UInt16(peer.port)),
            "the engine's socket (local port \(clientPort)) is not among this process's descriptors")
        let peerQueued = try #require(await peer.receiveQueue(), "the peer did not report its queue")
        let inKernel = Int64(AcceptingNonReader.queued(clientSocket, AcceptingNonReader.sendQueue)) + peerQueued
        Self.expectBoundedInEngine(produced: last, inKernel: inKernel)
        task.cancel()
        await recorder.waitForEnd()
        #expect(recorder.failure == .cancelled)
        await engine.shutdown()
    }
}

/// A Python TLS server on 127.0.0.1 with a 64 KiB receive buffer: accepts one connection,
/// completes the handshake, prints the client's port, then never reads; each line on its
/// standard input gets the bytes waiting in its receive queue. It gives up (and its output
/// ends) when no connection or handshake comes within 120 s, so a test never hangs on it.
private final class TLSNonReader: Sendable {
    private static let script = """
        import socket, ssl, sys, fcntl, termios, struct
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[1], sys.argv[2])
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        srv.bind(("127.0.0.1", 0)); srv.listen(4); srv.settimeout(120)
        print(srv.getsockname()[1], flush=True)
        raw, addr = srv.accept()
        raw.settimeout(120)
        tls = ctx.wrap_socket(raw, server_side=True)
        print(addr[1], flush=True)
        for line in sys.stdin:
            n = struct.unpack("i", fcntl.ioctl(tls.fileno(), termios.FIONREAD, b"\\0\\0\\0\\0"))[0]
            print(n + tls.pending(), flush=True)
        """
    let port: Int
    private let process: Process
    private let input: FileHandle
    private let output: FileHandle
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tls-nonreader-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let chain = try TestCertificateAuthority.shared.serverChain(.valid)
        let certificate = directory.appendingPathComponent("chain.pem")
        let key = directory.appendingPathComponent("key.pem")
        try chain.certificatesPEM.write(to: certificate, atomically: true, encoding: .utf8)
        try chain.privateKeyPEM.write(to: key, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, certificate.path, key.path]
        let inputPipe = Pipe()
        let outputPipe = Pipe()
        process.standardInput = inputPipe
        process.standardOutput = outputPipe
        process.standardError = FileHandle.nullDevice
        input = inputPipe.fileHandleForWriting
        output = outputPipe.fileHandleForReading
        try ProcessLauncher.run(process)
        guard let port = Self.readLine(output).flatMap({ Int($0) }) else {
            process.terminate()
            throw EngineTestFailure("the Python TLS server did not start")
        }
        self.port = port
    }

    /// The server's next line (on a thread of its own: the read blocks); nil at its end.
    func nextLine() async -> String? {
        let output = self.output
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Self.readLine(output)) }
        }
    }

    /// The bytes waiting in the server's receive queue (and its TLS buffer).
    func receiveQueue() async -> Int64? {
        input.write(Data("\n".utf8))
        return await nextLine().flatMap { Int64($0) }
    }

    func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func readLine(_ handle: FileHandle) -> String? {
        var line = Data()
        while true {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte.first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
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

extension EngineUploadBatchingTests {
    /// An endless streamed body of `chunk`s, and the bytes it has handed the engine so far.
    static func endlessBody() -> (RequestBody, ProducedBytes) {
        let produced = ProducedBytes()
        let body = RequestBody.stream(length: nil) { writer in
            while true {
                try await writer.write(chunk)
                produced.add(Int64(chunk.readableBytes))
            }
        }
        return (body, produced)
    }

    /// What the engine holds itself (produced minus what the kernel queues on both ends) stays
    /// within its pipe and its write buffer, plus two chunks in flight between them.
    static func expectBoundedInEngine(produced: Int64, inKernel: Int64) {
        let inEngine = produced - inKernel
        let bound = Int64(RequestBodyPipe.highWater + HTTP1ConnectionHandler.uploadWriteWaterMark.high)
            + 2 * Int64(chunk.readableBytes)
        #expect(inKernel > 0)
        #expect(inEngine <= bound, "the engine holds \(inEngine) bytes (\(produced) produced, \(inKernel) in the kernel)")
    }
}
