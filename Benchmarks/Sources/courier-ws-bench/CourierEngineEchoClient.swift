import CourierEngine
import Foundation

/// CourierEngine's `HTTPEngine.openWebSocket(_:options:)`: a `WebSocketConnection` with async
/// `send` and `receive`; permessage-deflate not offered; `close()` returns once the connection
/// is closed. `courier-engine-loop` runs the same sockets from tasks on `HTTPEngine.taskExecutor`.
final class CourierEngineEchoClient: EchoClient {
    private let engine: HTTPEngine
    private let options: WebSocketOptions
    private let route: OpeningRoute?
    /// `engine.taskExecutor` for the `courier-engine-loop` client, else nil.
    let taskExecutor: (any TaskExecutor)?

    /// `trust`: the test CA, for the TLS cases. `route`: how openings go: RFC 8441 is turned off
    /// for the HTTP/1.1 route (every socket a new connection), left on (the default) for the
    /// HTTP/2 one; each socket's metrics must then name the route's protocol. `onLoop`: the
    /// sockets' tasks run on the engine's task executor.
    init(trust: ServerTrust?, route: OpeningRoute?, onLoop: Bool) throws {
        var configuration = EngineConfiguration()
        if let trust { configuration.tls.additionalTrustRootsDER = [trust.rootDER] }
        engine = try HTTPEngine(configuration: configuration)
        var options = WebSocketOptions()
        options.perMessageDeflate = false
        options.maximumMessageSize = EchoPayload.maximumMessageSize
        options.allowsHTTP2 = route != .http1Upgrade
        self.options = options
        self.route = route
        taskExecutor = onLoop ? engine.taskExecutor : nil
    }

    func prime(_ url: URL) async throws {
        let response = try await engine.collect(EngineRequest(url: url))
        guard response.head.status.code == 200 else { throw EchoError.refused(Int(response.head.status.code)) }
        guard response.metrics.networkProtocolName == "h2" else {
            throw EchoError.unexpected("the priming GET went over \(response.metrics.networkProtocolName ?? "?"), not h2")
        }
    }

    func run(_ url: URL, _ script: EchoScript) async throws {
        let socket: WebSocketConnection
        switch try await engine.openWebSocket(EngineRequest(url: url), options: options) {
        case .opened(let opened): socket = opened
        case .refused(let head, _, _): throw EchoError.refused(Int(head.status.code))
        }
        do {
            if let route, socket.metrics.networkProtocolName != route.networkProtocolName {
                throw EchoError.unexpected("opened over \(socket.metrics.networkProtocolName ?? "?"), not \(route.networkProtocolName)")
            }
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
