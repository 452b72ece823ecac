import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A loopback HTTP server that answers every request with a GIF whose width names the user who
/// asked: each request's credentials (the value of its first field of `Authorization`,
/// `Cookie`, `Proxy-Authorization`, `X-Api-Key`, `X-Auth-Token`, `X-Amz-Security-Token`) are
/// looked up in `widths`; no credentials give width 1, unknown ones a `401`. It records the credentials of every request it received, in order. For the
/// image tests of a downloader shared by several users (the in-process test server answers
/// every user the same image).
final class ImagePerUserServer: Sendable {
    private let channel: any Channel
    private let recorder: Recorder
    let url: URL

    /// The credentials each request carried (nil: none), in arrival order.
    var requestCredentials: [String?] { recorder.received.withLock { $0 } }

    private init(channel: any Channel, recorder: Recorder, url: URL) {
        self.channel = channel
        self.recorder = recorder
        self.url = url
    }

    /// Starts the server, runs `body`, shuts the server down.
    static func withRunning<T>(widths: [String: UInt16], _ body: (ImagePerUserServer) async throws -> T) async throws -> T {
        let server = try await start(widths: widths)
        do {
            let result = try await body(server)
            try await server.channel.close()
            return result
        } catch {
            try? await server.channel.close()
            throw error
        }
    }

    /// A GIF header (all ``ImageHeaderParser`` reads): `GIF89a`, width and height little-endian.
    static func gif(width: UInt16, height: UInt16 = 1) -> [UInt8] {
        Array("GIF89a".utf8) + [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8), 0, 0, 0]
    }

    private static func start(widths: [String: UInt16]) async throws -> ImagePerUserServer {
        let recorder = Recorder()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Responder(widths: widths, recorder: recorder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port, let url = URL(string: "http://127.0.0.1:\(port)/avatar.gif") else {
            try await channel.close()
            throw NoPort()
        }
        return ImagePerUserServer(channel: channel, recorder: recorder, url: url)
    }

    struct NoPort: Error {}

    private final class Recorder: Sendable {
        let received = Mutex<[String?]>([])
    }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        static let credentialFields = [
            "authorization", "cookie", "proxy-authorization", "x-api-key", "x-auth-token", "x-amz-security-token",
        ]
        let widths: [String: UInt16]
        let recorder: Recorder
        var credentials: String?

        init(widths: [String: UInt16], recorder: Recorder) {
            self.widths = widths
            self.recorder = recorder
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                credentials = Self.credentialFields.lazy.compactMap { head.headers.first(name: $0) }.first
            case .body:
                break
            case .end:
                let credentials = self.credentials
                recorder.received.withLock { $0.append(credentials) }
                let width: UInt16? = if let credentials { widths[credentials] } else { 1 }
                var headers = HTTPHeaders()
                let body: [UInt8]
                let status: HTTPResponseStatus
                if let width {
                    status = .ok
                    body = ImagePerUserServer.gif(width: width)
                    headers.add(name: "Content-Type", value: "image/gif")
                } else {
                    status = .unauthorized
                    body = Array("unknown user".utf8)
                    headers.add(name: "Content-Type", value: "text/plain")
                }
                headers.add(name: "Content-Length", value: "\(body.count)")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
