import ArgumentParser

/// The WebSocket clients compared.
enum WSClientKind: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// `HTTPEngine.openWebSocket` from CourierEngine.
    case courierEngine = "courier-engine"
    /// `URLSessionManager.webSocketTask(with:)` from Courier's session layer.
    case courierSession = "courier-session"
    /// vapor/websocket-kit's `WebSocket.connect(to:configuration:on:onUpgrade:)`.
    case webSocketKit = "websocket-kit"
    /// `WebSocketClient` from hummingbird-websocket's HummingbirdWSClient.
    case hummingbird

    /// Whether this is Courier (else a peer it is compared with).
    var isCourier: Bool { self == .courierEngine || self == .courierSession }

    /// Whether the client runs `benchCase` (every client runs every case so far; a route a peer
    /// cannot take, such as an RFC 8441 stream, would return false here and show `—`).
    func supports(_ benchCase: WSCase) -> Bool {
        switch benchCase.workload {
        case .echo: return true
        case .open(.http1Upgrade): return true
        }
    }
}
