@testable import CourierEngine
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPCompression
import Synchronization

/// The engine's response path (NIO's HTTP/1.1 decoder, gzip/deflate decompression and
/// Courier's connection handler) fed arbitrary bytes as a server's answer to a GET, the way a
/// real connection is assembled. Must hold for any input: no trap, exactly one terminal event,
/// no body before the head, and no more body bytes than the decompression limit allows.
enum ResponseParserFuzzing {
    private static let decompressionLimit = 1 << 20

    static func run(_ bytes: [UInt8]) {
        let channel = EmbeddedChannel()
        let handler = HTTP1ConnectionHandler(
            host: "fuzz.invalid", decompressionMaximumSize: decompressionLimit, setupErrorBox: SetupErrorBox())
        do {
            let sync = channel.pipeline.syncOperations
            try sync.addHandler(HTTPRequestEncoder())
            try sync.addHandler(
                ByteToMessageHandler(
                    HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
            try sync.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(100)))
            try sync.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        } catch {
            fatalError("pipeline setup failed: \(error)")
        }

        let log = EventLog()
        guard let url = URL(string: "http://fuzz.invalid/resource"),
            let target = try? RequestTarget(url: url)
        else { fatalError("request target") }
        let execution = RequestExecution(
            request: EngineRequest(url: url),
            target: target,
            waiterID: .init(raw: 1),
            idleTimeout: .seconds(30),
            onEvent: { event in log.record(event) })
        handler.start(execution, reused: false)
        _ = try? channel.readOutbound(as: IOData.self)

        // Deliver the answer in up to three reads, split where the first bytes say.
        var remaining = bytes[...]
        for _ in 0..<3 where !remaining.isEmpty {
            let cut = remaining.count > 1 ? Int(remaining[remaining.startIndex]) % remaining.count + 1 : remaining.count
            let piece = remaining.prefix(cut)
            remaining = remaining.dropFirst(cut)
            do {
                try channel.writeInbound(channel.allocator.buffer(bytes: piece))
            } catch {
                break
            }
        }
        if !remaining.isEmpty { _ = try? channel.writeInbound(channel.allocator.buffer(bytes: remaining)) }
        _ = try? channel.finish()
        // A response still open when the connection closed must have been ended by now.
        handler.abort(execution, with: .cancelled)
        // Run (or drop) whatever timers are left, as a real loop eventually does.
        channel.embeddedEventLoop.advanceTime(by: .hours(24))
        try? channel.embeddedEventLoop.syncShutdownGracefully()

        let events = log.events
        let terminal = events.filter(\.isTerminal).count
        invariant(terminal == 1, "\(terminal) terminal events for one request: \(events.map(Self.name))")
        var sawHead = false
        var bodyBytes = 0
        for event in events {
            switch event {
            case .responseHead: sawHead = true
            case .bodyPart(let buffer):
                invariant(sawHead, "a body part before the head")
                bodyBytes += buffer.readableBytes
            default: break
            }
        }
        invariant(bodyBytes <= max(decompressionLimit, bytes.count), "\(bodyBytes) body bytes from \(bytes.count) input bytes")
    }

    private static func name(_ event: EngineEvent) -> String {
        switch event {
        case .uploadProgress: return "uploadProgress"
        case .metricsUpdated: return "metricsUpdated"
        case .responseHead(let head): return "head(\(head.status.code))"
        case .bodyPart(let buffer): return "body(\(buffer.readableBytes))"
        case .finished: return "finished"
        case .failed(let error, _): return "failed(\(error))"
        }
    }

    /// The events the engine reported, in order.
    final class EventLog: Sendable {
        private let storage = Mutex<[EngineEvent]>([])
        func record(_ event: EngineEvent) { storage.withLock { $0.append(event) } }
        var events: [EngineEvent] { storage.withLock { $0 } }
    }
}
