import Foundation
import NIOCore
import NIOPosix
import NIOWebSocket
import Synchronization
import WebSocketKit

/// vapor/websocket-kit: `WebSocket.connect(to:configuration:on:onUpgrade:)` on NIO's shared
/// `MultiThreadedEventLoopGroup`, driven from its callbacks as websocket-kit is meant to be:
/// `onBinary` checks each echo and sends the next message from the socket's event loop (no task
/// hop per message). The frame limit is raised from 16 KiB to 1 MiB for the 64 KiB messages;
/// websocket-kit has no permessage-deflate. Its TLS context is made per connection (its own
/// `makeTLSHandler`).
final class WebSocketKitEchoClient: EchoClient {
    private let group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    private let configuration: WebSocketClient.Configuration

    /// `trust`: the test CA, for the TLS cases.
    init(trust: ServerTrust?) {
        configuration = WebSocketClient.Configuration(
            tlsConfiguration: trust?.clientConfiguration(),
            maxFrameSize: EchoPayload.maximumMessageSize
        )
    }

    func run(_ url: URL, _ script: EchoScript) async throws {
        let exchange = Exchange(script, finished: group.any().makePromise(of: Void.self))
        let upgraded: EventLoopFuture<Void> = WebSocket.connect(to: url, configuration: configuration, on: group) { socket in
            exchange.start(on: socket)
        }
        do {
            try await upgraded.get()
        } catch {
            exchange.finished.fail(error)
            throw error
        }
        try await exchange.finished.futureResult.get()
    }

    func shutdown() async {}
}

/// One socket's script, played from websocket-kit's callbacks.
private final class Exchange: Sendable {
    /// Where the script is, and how it ended.
    private struct State {
        /// The message whose echo is awaited.
        var index = 0
        var error: (any Error)?
        var done = false
    }

    let script: EchoScript
    /// Succeeds once the socket closed after its last echo with 1000; fails otherwise.
    let finished: EventLoopPromise<Void>
    private let state = Mutex(State())

    init(_ script: EchoScript, finished: EventLoopPromise<Void>) {
        self.script = script
        self.finished = finished
    }

    /// On the socket's event loop, right after the upgrade.
    func start(on socket: WebSocket) {
        socket.onBinary { socket, echo in self.received(echo, on: socket) }
        socket.onText { socket, _ in self.abandon(socket, EchoError.unexpected("a text message")) }
        socket.onClose.whenComplete { _ in self.closed(socket) }
        send(0, on: socket)
    }

    private func send(_ index: Int, on socket: WebSocket) {
        socket.send(script.buffer(index), opcode: .binary, fin: true, promise: nil)
    }

    private func received(_ echo: ByteBuffer, on socket: WebSocket) {
        let index = state.withLock { $0.index }
        do {
            try script.check(echo, index)
        } catch {
            abandon(socket, error)
            return
        }
        let next = index + 1
        state.withLock { $0.index = next }
        if index == script.roundTrips {
            script.timing?.leave(script.socket)
            state.withLock { $0.done = true }
            socket.close(code: .normalClosure, promise: nil)
        } else if index == 0, let timing = script.timing {
            let socketNumber = script.socket
            Task {
                await timing.arrive(socketNumber)
                self.send(next, on: socket)
            }
        } else {
            send(next, on: socket)
        }
    }

    private func abandon(_ socket: WebSocket, _ error: any Error) {
        state.withLock { state in
            if state.error == nil { state.error = error }
        }
        socket.close(code: .unexpectedServerError, promise: nil)
    }

    private func closed(_ socket: WebSocket) {
        let (error, done, index) = state.withLock { ($0.error, $0.done, $0.index) }
        if let error {
            finished.fail(error)
        } else if !done {
            finished.fail(EchoError.badClose("the socket closed awaiting echo #\(index)"))
        } else if let code = socket.closeCode, code != .normalClosure {
            finished.fail(EchoError.badClose("code \(code)"))
        } else {
            finished.succeed(())
        }
    }
}
