import NIOCore
import Synchronization

/// The open connections of one server and its counters, shared by the accepting channel's
/// initializer (any event loop) and `TestServer` (any thread); guarded by a mutex.
final class ConnectionRegistry: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var accepted = 0
        var requests = 0
        var requestsByPath: [String: Int] = [:]
        var http2ConnectionCredit = 0
        var webSocketCloses: [Int?] = []
        var webSocketPongs: [[UInt8]] = []
        var isClosed = false
    }

    private let state = Mutex(State())

    /// Counts a new connection and remembers it until it closes. A connection that arrives
    /// after `closeAll()` is closed at once.
    func accepted(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let closeNow = self.state.withLock { state in
            state.accepted += 1
            if state.isClosed { return true }
            state.open[id] = channel
            return false
        }
        if closeNow {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { _ in
            _ = self.state.withLock { $0.open.removeValue(forKey: id) }
        }
    }

    /// Counts one request head, also under its path (the request target without its query).
    func requestReceived(target: String) {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? target
        self.state.withLock { state in
            state.requests += 1
            state.requestsByPath[path, default: 0] += 1
        }
    }

    /// Request heads received so far whose path (query left out) is `path`.
    func requestCount(forPath path: String) -> Int {
        self.state.withLock { $0.requestsByPath[path] ?? 0 }
    }

    /// Counts connection-level flow-control credit a client granted (an HTTP/2 `WINDOW_UPDATE`
    /// on stream 0).
    func http2ConnectionCreditReceived(_ increment: Int) {
        self.state.withLock { $0.http2ConnectionCredit += increment }
    }

    /// Records the close frame a WebSocket client sent: its code, or nil for none.
    func webSocketCloseReceived(code: Int?) {
        self.state.withLock { $0.webSocketCloses.append(code) }
    }

    /// Records the payload of a pong a WebSocket client sent.
    func webSocketPongReceived(_ payload: [UInt8]) {
        self.state.withLock { $0.webSocketPongs.append(payload) }
    }

    /// The close codes WebSocket clients sent, in order (nil: a close frame without a code).
    var webSocketCloses: [Int?] { self.state.withLock { $0.webSocketCloses } }

    /// The payloads of the pongs WebSocket clients sent, in order.
    var webSocketPongs: [[UInt8]] { self.state.withLock { $0.webSocketPongs } }

    /// Connection-level `WINDOW_UPDATE` credit received so far, over all HTTP/2 connections.
    var http2ConnectionCredit: Int { self.state.withLock { $0.http2ConnectionCredit } }

    /// TCP connections accepted so far.
    var acceptedCount: Int { self.state.withLock { $0.accepted } }

    /// Request heads received so far.
    var requestCount: Int { self.state.withLock { $0.requests } }

    /// Connections accepted and not closed yet.
    var openCount: Int { self.state.withLock { $0.open.count } }

    /// Closes every open connection (stalled ones included) and refuses new ones.
    func closeAll() async {
        for channel in self.markClosed() {
            try? await channel.close()
        }
    }

    /// `closeAll()` without waiting for the connections to finish closing.
    func startClosingAll() {
        for channel in self.markClosed() {
            channel.close(promise: nil)
        }
    }

    private func markClosed() -> [any Channel] {
        self.state.withLock { state in
            state.isClosed = true
            return Array(state.open.values)
        }
    }
}
