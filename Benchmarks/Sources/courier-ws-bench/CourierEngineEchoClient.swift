import CourierEngine
import Foundation

/// CourierEngine's `HTTPEngine.openWebSocket(_:options:)`: a `WebSocketConnection` with async
/// `send` and `receive`; permessage-deflate not offered; `close()` returns once the connection
/// is closed.
final class CourierEngineEchoClient: EchoClient {
    private let engine: HTTPEngine
    private let options: WebSocketOptions

    /// `trust`: the test CA, for the TLS cases. `route`: how openings go (every route so far
    /// is a new HTTP/1.1 connection, the engine's only one).
    init(trust: ServerTrust?, route: OpeningRoute?) throws {
        var configuration = EngineConfiguration()
        if let trust { configuration.tls.additionalTrustRootsDER = [trust.rootDER] }
        engine = try HTTPEngine(configuration: configuration)
        var options = WebSocketOptions()
        options.perMessageDeflate = false
        options.maximumMessageSize = EchoPayload.maximumMessageSize
        self.options = options
    }

    func run(_ url: URL, _ script: EchoScript) async throws {
        let socket: WebSocketConnection
        switch try await engine.openWebSocket(EngineRequest(url: url), options: options) {
        case .opened(let opened): socket = opened
        case .refused(let head, _, _): throw EchoError.refused(Int(head.status.code))
        }
        do {
            try await script.play { index in
                try await socket.send(.binary(script.buffer(index)))
                guard case .binary(let echo)? = try await socket.receive() else {
                    throw EchoError.unexpected("no binary echo for message #\(index)")
                }
                try script.check(echo, index)
            }
        } catch {
            await socket.close(code: 1011)
            throw error
        }
        await socket.close()
        if let failure = socket.failure { throw EchoError.badClose(String(describing: failure)) }
        if let status = socket.closeStatus, status.code != 1000 { throw EchoError.badClose("code \(status.code)") }
    }

    func shutdown() async {
        await engine.shutdown()
    }
}
