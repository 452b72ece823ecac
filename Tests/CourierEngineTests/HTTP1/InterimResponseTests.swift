import CourierEngine
import Foundation
import NIOCore
import NIOPosix
import Testing

/// A server that answers every request with `count` interim heads and then a final `200 OK`
/// must end in a clear error after a small bound, not make the client spin or grow.
@Suite("Interim (1xx) responses")
struct InterimResponseTests {
    /// A raw TCP server: after the request head, writes `interim` (repeated `count` times, in
    /// one buffer) then a small `200 OK`, then closes.
    final class StormServer: Sendable {
        let channel: any Channel
        let port: Int

        init(interim: String, count: Int) async throws {
            let storm = String(repeating: interim, count: count) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Answer(reply: storm))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            port = channel.localAddress?.port ?? 0
        }

        func shutdown() async throws { try await channel.close() }

        private final class Answer: ChannelInboundHandler {
            typealias InboundIn = ByteBuffer
            typealias OutboundOut = ByteBuffer
            let reply: String
            var request = ""
            var answered = false
            init(reply: String) { self.reply = reply }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                var buffer = unwrapInboundIn(data)
                request += buffer.readString(length: buffer.readableBytes) ?? ""
                guard !answered, request.contains("\r\n\r\n") else { return }
                answered = true
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: reply)), promise: nil)
            }

            func errorCaught(context: ChannelHandlerContext, error: any Error) {
                context.close(promise: nil)
            }
        }
    }

    static func run(interim: String, count: Int) async throws -> Result<String, EngineError> {
        let server = try await StormServer(interim: interim, count: count)
        let engine = try HTTPEngine()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/storm"))
        let result: Result<String, EngineError>
        do {
            let response = try await engine.collect(EngineRequest(url: url))
            result = .success(String(decoding: response.body.readableBytesView, as: UTF8.self))
        } catch {
            result = .failure(error)
        }
        await engine.shutdown()
        try await server.shutdown()
        return result
    }

    @Test(arguments: ["HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"])
    func aStormOfInterimHeadsFails(interim: String) async throws {
        let result = try await Self.run(interim: interim, count: 5000)
        guard case .failure(.protocolViolation(let reason)) = result else {
            Issue.record("expected a protocol violation, got \(result)")
            return
        }
        #expect(reason.contains("interim (1xx) responses"), "\(reason)")
    }

    @Test func aFewInterimHeadsAreSkipped() async throws {
        let result = try await Self.run(interim: "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n", count: 3)
        #expect(try result.get() == "ok")
    }
}
