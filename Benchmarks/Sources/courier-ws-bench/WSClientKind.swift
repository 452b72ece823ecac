import ArgumentParser

/// The WebSocket clients compared.
enum WSClientKind: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// `HTTPEngine.openWebSocket` from CourierEngine.
    case courierEngine = "courier-engine"
    /// The same engine, every socket's task run on `HTTPEngine.taskExecutor` (one of the
    /// engine's event loops; the socket's connection may live on another).
    case courierEngineLoop = "courier-engine-loop"
    /// `URLSessionManager.webSocketTask(with:)` from Courier's session layer.
    case courierSession = "courier-session"
    /// The same session, every socket's task run on `URLSessionManager.taskExecutor`.
    case courierSessionLoop = "courier-session-loop"
    /// vapor/websocket-kit's `WebSocket.connect(to:configuration:on:onUpgrade:)`.
    case webSocketKit = "websocket-kit"
    /// `WebSocketClient` from hummingbird-websocket's HummingbirdWSClient.
    case hummingbird

    /// Whether this is Courier (else a peer it is compared with).
    var isCourier: Bool {
        switch self {
        case .courierEngine, .courierEngineLoop, .courierSession, .courierSessionLoop: return true
        case .webSocketKit, .hummingbird: return false
        }
    }

    /// Whether the client runs `benchCase`: every client runs the echo cases and the HTTP/1.1
    /// openings; only Courier opens a socket as an RFC 8441 stream (the peers show `—`).
    func supports(_ benchCase: WSCase) -> Bool {
        switch benchCase.workload {
        case .echo: return true
        case .open(.http1Upgrade): return true
        case .open(.http2Stream): return isCourier
        }
    }
}
