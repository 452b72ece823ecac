import CourierEngine
import CourierTestServer
import Foundation
import NIOCore
import Synchronization
import Testing

/// HTTP/2 flow control as backpressure, both ways, over real TLS: a paused reader stops the
/// server at the stream window, and a server that grants no window stops the body producer.
@Suite("HTTPEngine HTTP/2 backpressure")
struct EngineHTTP2BackpressureTests {
    static let chunk = ByteBuffer(repeating: 0x61, count: 64 * 1024)

    private func trusting() throws -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.tls.trustsSystemRoots = false
        configuration.tls.additionalTrustRootsDER = [try TestCertificateAuthority.shared.rootCertificateDER]
        return configuration
    }

    /// Samples `value` every 200 ms until it stayed the same (and above zero) for a second.
    private func waitUntilStable(_ value: () -> Int64) async -> Int64? {
        var last: Int64 = -1
        var stable = 0
        for _ in 0..<200 where stable < 5 {
            try? await Task.sleep(for: .milliseconds(200))
            let now = value()
            stable = now == last && now > 0 ? stable + 1 : 0
            last = now
        }
        return stable >= 5 ? last : nil
    }

    /// Disabled: it passes, but while the reader is paused the process grows by ~2.5 GB/s up to
    /// ~3.7 GB (perf: NIOHTTP2's HTTP2FrameDecoder SimulatingDataFramesParserState.accumulate
    /// allocating), which breaks every suite that measures process memory in the same run. A
    /// known HTTP/2 bug, left open in issue 15's note; run it alone with `--filter` to see it.
    @Test(.disabled("HTTP/2 paused download: memory grows while paused (issue 15, open)"))
    func aPausedReaderHoldsTheServerAtTheWindow() async throws {
        try await withEngine(server: .init(tls: .valid), engine: try trusting()) { engine, server in
            let size = 64 << 20
            let received = Mutex<Int64>(0)
            let recorder = EventRecorder()
            let url = URL(string: "https://localhost:\(server.port)/download/\(size)")!
            let task = engine.execute(EngineRequest(url: url)) { event in
                if case .bodyPart(let buffer) = event { received.withLock { $0 += Int64(buffer.readableBytes) } }
                recorder.record(event)
            }
            #expect(await eventually { received.withLock { $0 } > 0 })
            task.setReadingPaused(true)
            let held = await waitUntilStable { received.withLock { $0 } }
            let bytes = try #require(held, "the body kept arriving while paused")
            // The stream window (1 MiB) plus what was in flight when the pause began.
            #expect(bytes < 8 << 20, "\(bytes) bytes arrived past a paused reader")
            // Another stream on the same connection is not held up by the paused one.
            let other = try await engine.collect(EngineRequest(url: URL(string: "https://localhost:\(server.port)/get")!))
            #expect(other.head.status == .ok)
            task.setReadingPaused(false)
            await recorder.waitForEnd()
            #expect(recorder.failure == nil)
            #expect(received.withLock { $0 } == Int64(size))
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func aServerThatGrantsNoWindowStopsTheProducer() async throws {
        let serverConfiguration = TestServer.Configuration(tls: .valid, http2: .init(initialWindowSize: 0))
        try await withEngine(server: serverConfiguration, engine: try trusting()) { engine, server in
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
            let url = URL(string: "https://localhost:\(server.port)/upload")!
            let task = engine.execute(EngineRequest(method: "POST", url: url, body: body)) { recorder.record($0) }
            let held = await waitUntilStable { produced.withLock { $0 } }
            let bytes = try #require(held, "the producer never stopped")
            // The body pipe's high-water mark (512 KiB) and the stream's outbound buffer.
            #expect(bytes < 2 << 20, "the producer got \(bytes) bytes past a closed window")
            task.cancel()
            await recorder.waitForEnd()
            #expect(recorder.failure == .cancelled)
            #expect(await eventually { producerEnded.withLock { $0 } })
            // The connection is fine for other streams.
            let other = try await engine.collect(EngineRequest(url: URL(string: "https://localhost:\(server.port)/get")!))
            #expect(other.head.status == .ok)
            #expect(server.connectionsAccepted == 1)
        }
    }
}
