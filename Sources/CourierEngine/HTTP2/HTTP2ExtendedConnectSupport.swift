import Synchronization

/// Whether the server of an HTTP/2 connection allows RFC 8441's extended CONNECT (it sent
/// `SETTINGS_ENABLE_CONNECT_PROTOCOL = 1`), so a WebSocket can open as a stream of it.
///
/// Set on the connection's event loop by ``HTTP2ConnectionObserver`` as SETTINGS arrive; read
/// from any thread by the pool when it looks for a connection to carry a WebSocket.
final class HTTP2ExtendedConnectSupport: Sendable {
    private let enabled = Atomic<Bool>(false)

    init() {}

    /// Whether the server's latest SETTINGS enabled the CONNECT protocol.
    var isEnabled: Bool { enabled.load(ordering: .relaxed) }

    /// Records the server's `SETTINGS_ENABLE_CONNECT_PROTOCOL` value.
    func record(_ value: Int) {
        enabled.store(value == 1, ordering: .relaxed)
    }
}
