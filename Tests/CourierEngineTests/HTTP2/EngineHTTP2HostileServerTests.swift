import CourierEngine
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// HTTP/2 (h2c prior knowledge) against a raw server that misbehaves at the frame level: it
/// closes the connection, or sends `GOAWAY` naming no stream, while a burst of requests is
/// being started (streams queued in `HTTP2Connection`'s pending starts). Every request must
/// end, with a typed error, never hang.
@Suite("HTTPEngine HTTP/2 hostile server")
struct EngineHTTP2HostileServerTests {
    enum Behaviour: Sendable {
        /// Answers this many streams with an empty 200, then closes the socket on the next HEADERS.
        case closeOnHeaders(after: Int)
        /// Answers this many streams with an empty 200, then answers the next HEADERS with
        /// `GOAWAY` (NO_ERROR) naming the last stream answered, and keeps the socket open.
        case goAway(after: Int)
        /// Announces `SETTINGS_MAX_CONCURRENT_STREAMS` 0 and never raises it.
        case noStreamsAllowed
        /// Acknowledges the client's SETTINGS only once the first stream's HEADERS arrived (so
        /// the client's initial window changes while a stream is open), then answers every
        /// stream with an empty 200.
        case lateSettingsAck
        /// Answers the first HEADERS with a `WINDOW_UPDATE` of 2³¹−1 on that stream (taking its
        /// send window past the maximum), then a 200 ending the stream.
        case streamWindowOverflow
        /// Answers the first HEADERS with a `WINDOW_UPDATE` of 2³¹−1 on the connection, then a
        /// 200 ending the stream.
        case connectionWindowOverflow
        /// Answers the first HEADERS with a response head without `:status`, ending the stream.
        case headWithoutStatus
    }

    /// Sends `count` requests at once; returns each one's error (nil: it succeeded). Hangs are
    /// bounded: a request still running after `bound` seconds is reported as an issue.
    /// With `warmUp`, one request first opens the connection (and must succeed), so the burst
    /// is submitted from off the loop to a live connection: its streams start in batches.
    private func burst(
        _ count: Int, behaviour: Behaviour, warmUp: Bool = false, idleTimeout: TimeAmount? = nil,
        connectionsAccepted: (Int) -> Void = { _ in }
    ) async throws -> [EngineError?] {
        let server = try await RawHTTP2Server.start(behaviour)
        var configuration = EngineConfiguration()
        configuration.httpVersion = .http2PriorKnowledge
        let engine = try HTTPEngine(configuration: configuration)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/get"))
        if warmUp {
            let first = try await engine.collect(EngineRequest(url: url))
            #expect(first.head.status == .ok)
        }
        // Bounded with unstructured tasks: a task group would wait for a hung child.
        let results = await EngineTaskExecutorTests.bounded(seconds: 120) {
            await withTaskGroup(of: EngineError?.self) { requests in
                for _ in 0..<count {
                    requests.addTask {
                        await engineError { _ = try await engine.collect(EngineRequest(url: url, idleTimeout: idleTimeout)) }
                    }
                }
                return await requests.reduce(into: []) { $0.append($1) }
            }
        }
        await engine.shutdown()
        connectionsAccepted(server.connectionsAccepted)
        try await server.close()
        #expect(results != nil, "requests still running after 120 s")
        return results ?? []
    }

    /// Every request fails, except what a new connection answers: a GET the closed connection
    /// took is replayed on a new one (a stale connection's replay), and with the warm-up the
    /// server answers each connection's first stream.
    @Test(arguments: [false, true])
    func aServerClosingOnHeadersFailsEveryRequest(warmUp: Bool) async throws {
        let answered = warmUp ? 1 : 0
        var connections = 0
        let errors = try await burst(40, behaviour: .closeOnHeaders(after: answered), warmUp: warmUp) { connections = $0 }
        #expect(errors.count == 40)
        let succeeded = errors.filter { $0 == nil }.count
        #expect(succeeded <= connections * answered - answered, "\(succeeded) answered over \(connections) connections")
        for case let error? in errors {
            #expect(error != .shutDown, "got \(String(describing: error))")
        }
    }

    /// `GOAWAY` naming none of the burst's streams: each request was unprocessed and is retried
    /// on a new connection, which answers one stream (with the warm-up) and sends `GOAWAY`
    /// too, until the retries run out: every request ends, answered or refused.
    @Test(arguments: [false, true])
    func aGoAwayRefusingTheBurstEndsEveryRequest(warmUp: Bool) async throws {
        let errors = try await burst(40, behaviour: .goAway(after: warmUp ? 1 : 0), warmUp: warmUp)
        #expect(errors.count == 40)
        for error in errors {
            guard let error else {
                #expect(warmUp, "only a connection that answers a stream can serve one")
                continue
            }
            guard case .connectionLost(let reason) = error else {
                Issue.record("expected a refusal, got \(error)")
                continue
            }
            #expect(reason.contains("refused"))
        }
        #expect(errors.contains { $0 != nil })
    }

    /// The client's stream window at its largest (the caller configured `Int.max`): applying
    /// it to a stream already open when the server acknowledges the SETTINGS must not overflow.
    @Test(arguments: [Int.max, Int(Int32.max), 1 << 30 + 1])
    func aHugeStreamWindowAcknowledgedWhileAStreamIsOpenWorks(_ window: Int) async throws {
        let server = try await RawHTTP2Server.start(.lateSettingsAck)
        var configuration = EngineConfiguration()
        configuration.httpVersion = .http2PriorKnowledge
        configuration.http2StreamWindowSize = window
        let engine = try HTTPEngine(configuration: configuration)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/get"))
        let error = await engineError {
            let response = try await engine.collect(EngineRequest(url: url))
            #expect(response.head.status == .ok)
        }
        await engine.shutdown()
        try await server.close()
        #expect(error == nil)
    }

    /// RFC 9113 §6.9.1: a `WINDOW_UPDATE` taking a stream's window past 2³¹−1 is a stream
    /// error. The GET has ended its side of the stream (NIOHTTP2 no longer tracks its window),
    /// yet the stream is reset with `FLOW_CONTROL_ERROR` and the request fails naming it.
    @Test func aStreamWindowUpdatePastTheMaximumResetsTheStream() async throws {
        guard let violation = try await violation(from: .streamWindowOverflow) else { return }
        #expect(violation.endedBy == .courier)
        #expect(violation.scope == .stream)
        #expect(violation.errorCode == "FLOW_CONTROL_ERROR")
        #expect(violation.name == "InvalidFlowControlWindowSize")
        #expect(violation.description.hasPrefix("Courier reset the HTTP/2 stream: "))
    }

    /// A response head without `:status` is malformed (RFC 9113 §8.1.1): Courier resets the
    /// stream, and says so, naming the violation, instead of blaming the server for a reset.
    @Test func aMalformedResponseHeadIsAResetByCourier() async throws {
        guard let violation = try await violation(from: .headWithoutStatus) else { return }
        #expect(violation.endedBy == .courier)
        #expect(violation.scope == .stream)
        #expect(violation.description.hasPrefix("Courier reset the HTTP/2 stream: "), "\(violation)")
        #expect(!violation.description.contains(".swift") && !violation.description.contains("location"), "\(violation)")
    }

    /// A connection-level `WINDOW_UPDATE` past 2³¹−1 is a connection error: NIOHTTP2 already
    /// answers `GOAWAY` `FLOW_CONTROL_ERROR`; the request fails naming Courier and the violation.
    @Test func aConnectionWindowUpdatePastTheMaximumClosesTheConnection() async throws {
        guard let violation = try await violation(from: .connectionWindowOverflow) else { return }
        #expect(violation.endedBy == .courier)
        #expect(violation.scope == .connection)
        #expect(violation.name == "InvalidFlowControlWindowSize")
        #expect(!violation.description.contains(".swift"))
    }

    /// The HTTP/2 violation a GET to a `behaviour` server fails with (over h2c prior knowledge);
    /// nil, with an issue recorded, when it fails otherwise or not at all.
    private func violation(from behaviour: Behaviour) async throws -> HTTP2ProtocolViolation? {
        let server = try await RawHTTP2Server.start(behaviour)
        var configuration = EngineConfiguration()
        configuration.httpVersion = .http2PriorKnowledge
        let engine = try HTTPEngine(configuration: configuration)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/get"))
        let error = await engineError { _ = try await engine.collect(EngineRequest(url: url, idleTimeout: .seconds(10))) }
        await engine.shutdown()
        try await server.close()
        guard case .http2ProtocolViolation(let violation) = error else {
            Issue.record("expected an HTTP/2 protocol violation, got \(String(describing: error))")
            return nil
        }
        return violation
    }

    @Test func aServerAllowingNoStreamsTimesRequestsOut() async throws {
        let errors = try await burst(5, behaviour: .noStreamsAllowed, idleTimeout: .seconds(1))
        #expect(errors.count == 5)
        for error in errors {
            #expect(error != nil && error != .shutDown, "got \(String(describing: error))")
        }
    }
}

/// A loopback TCP server speaking just enough HTTP/2 to misbehave: it sends its SETTINGS,
/// acknowledges the client's, and reacts to the first HEADERS as its behaviour says.
final class RawHTTP2Server: Sendable {
    /// A control frame the server received.
    enum ReceivedFrame: Sendable, Equatable {
        case rstStream(stream: UInt32, code: UInt32)
        case goAway(code: UInt32)
    }

    let port: Int
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let log: Mutex<[ReceivedFrame]>

    /// The RST_STREAM and GOAWAY frames received so far, in order.
    var received: [ReceivedFrame] { log.withLock { $0 } }
    /// The connections accepted so far.
    var connectionsAccepted: Int { recorder.connections.withLock { $0 } }
    private let recorder: FrameRecorder

    private init(port: Int, channel: any Channel, group: MultiThreadedEventLoopGroup, recorder: FrameRecorder) {
        self.recorder = recorder
        self.port = port
        self.channel = channel
        self.group = group
        self.log = Mutex([])
    }

    static func start(_ behaviour: EngineHTTP2HostileServerTests.Behaviour) async throws -> RawHTTP2Server {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let recorder = FrameRecorder()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                recorder.connections.withLock { $0 += 1 }
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(RawHTTP2Handler(behaviour: behaviour, recorder: recorder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else { throw EngineTestFailure("no port") }
        let server = RawHTTP2Server(port: port, channel: channel, group: group, recorder: recorder)
        recorder.server.withLock { $0 = server }
        return server
    }

    fileprivate func record(_ frame: ReceivedFrame) {
        log.withLock { $0.append(frame) }
    }
}

/// Hands received frames to the server once it exists (its handlers are made before).
private final class FrameRecorder: Sendable {
    let server = Mutex<RawHTTP2Server?>(nil)
    /// Connections accepted.
    let connections = Mutex(0)

    func record(_ frame: RawHTTP2Server.ReceivedFrame) {
        server.withLock { $0 }?.record(frame)
    }
}

extension RawHTTP2Server {

    func close() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }
}

private final class RawHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let behaviour: EngineHTTP2HostileServerTests.Behaviour
    private let recorder: FrameRecorder
    private var buffer = ByteBuffer()
    private var prefaceSeen = false
    private var reacted = false
    private var answered = 0
    private var lastAnswered: UInt32 = 0

    init(behaviour: EngineHTTP2HostileServerTests.Behaviour, recorder: FrameRecorder) {
        self.behaviour = behaviour
        self.recorder = recorder
    }

    private static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + [UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    func channelActive(context: ChannelHandlerContext) {
        var settings: [UInt8] = []
        if case .noStreamsAllowed = behaviour {
            settings = [0, 3, 0, 0, 0, 0]  // SETTINGS_MAX_CONCURRENT_STREAMS = 0
        }
        context.writeAndFlush(NIOAny(ByteBuffer(bytes: Self.frame(type: 4, payload: settings))), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        buffer.writeBuffer(&incoming)
        if !prefaceSeen {
            guard buffer.readableBytes >= 24 else { return }
            buffer.moveReaderIndex(forwardBy: 24)
            prefaceSeen = true
        }
        while buffer.readableBytes >= 9, let header = buffer.getBytes(at: buffer.readerIndex, length: 9) {
            let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
            guard buffer.readableBytes >= 9 + length else { return }
            buffer.moveReaderIndex(forwardBy: 9 + length)
            let type = header[3]
            let flags = header[4]
            let payload = buffer.getBytes(at: buffer.readerIndex - length, length: length) ?? []
            let word = { (offset: Int) -> UInt32 in
                payload.count >= offset + 4
                    ? UInt32(payload[offset]) << 24 | UInt32(payload[offset + 1]) << 16 | UInt32(payload[offset + 2]) << 8 | UInt32(payload[offset + 3])
                    : 0
            }
            if type == 3 {
                let stream = UInt32(header[5] & 0x7F) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8 | UInt32(header[8])
                recorder.record(.rstStream(stream: stream, code: word(0)))
            } else if type == 7 {
                recorder.record(.goAway(code: word(4)))
            }
            if case .lateSettingsAck = behaviour, type == 1 {
                let stream = UInt32(header[5] & 0x7F) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8 | UInt32(header[8])
                if !reacted {
                    reacted = true
                    context.write(NIOAny(ByteBuffer(bytes: Self.frame(type: 4, flags: 1))), promise: nil)
                }
                context.writeAndFlush(NIOAny(ByteBuffer(bytes: Self.frame(type: 1, flags: 5, stream: stream, payload: [0x88]))), promise: nil)
            } else if type == 4, flags & 1 == 0 {
                if case .lateSettingsAck = behaviour { continue }
                context.writeAndFlush(NIOAny(ByteBuffer(bytes: Self.frame(type: 4, flags: 1))), promise: nil)
            } else if type == 1, !reacted {
                let stream = UInt32(header[5] & 0x7F) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8 | UInt32(header[8])
                switch behaviour {
                case .closeOnHeaders(let after) where answered < after, .goAway(let after) where answered < after:
                    // HEADERS (END_STREAM, END_HEADERS) with `:status: 200` (HPACK static index 8).
                    answered += 1
                    lastAnswered = stream
                    context.writeAndFlush(NIOAny(ByteBuffer(bytes: Self.frame(type: 1, flags: 5, stream: stream, payload: [0x88]))), promise: nil)
                case .closeOnHeaders:
                    reacted = true
                    context.close(promise: nil)
                    return
                case .goAway:
                    reacted = true
                    let last = lastAnswered
                    let payload = [UInt8(last >> 24), UInt8(last >> 16 & 0xFF), UInt8(last >> 8 & 0xFF), UInt8(last & 0xFF), 0, 0, 0, 0]
                    context.writeAndFlush(NIOAny(ByteBuffer(bytes: Self.frame(type: 7, payload: payload))), promise: nil)
                case .noStreamsAllowed, .lateSettingsAck:
                    reacted = true
                case .headWithoutStatus:
                    reacted = true
                    // HEADERS (END_STREAM, END_HEADERS) holding only `x: y` (literal, new name).
                    let head = Self.frame(type: 1, flags: 5, stream: stream, payload: [0x00, 0x01, 0x78, 0x01, 0x79])
                    context.writeAndFlush(NIOAny(ByteBuffer(bytes: head)), promise: nil)
                case .streamWindowOverflow, .connectionWindowOverflow:
                    reacted = true
                    // WINDOW_UPDATE of 2^31-1, then HEADERS (END_STREAM, END_HEADERS) `:status: 200`.
                    let target: UInt32 = if case .streamWindowOverflow = behaviour { stream } else { 0 }
                    let update = Self.frame(type: 8, stream: target, payload: [0x7F, 0xFF, 0xFF, 0xFF])
                    let head = Self.frame(type: 1, flags: 5, stream: stream, payload: [0x88])
                    context.writeAndFlush(NIOAny(ByteBuffer(bytes: update + head)), promise: nil)
                }
            }
        }
    }
}
