import NIOCore
import NIOTLS

/// Sits right after TLS (or at the front, for h2c) while a connection that may speak HTTP/2 is
/// set up: reads the protocol ALPN picked, has the matching pipeline installed after itself,
/// and reports the connection ready, or the setup error (a rejected chain names why).
///
/// Event-loop confined. Once the connection is ready it passes everything through.
final class ConnectionSetupHandler: ChannelInboundHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny

    /// What the connection speaks.
    enum Negotiated: Equatable {
        case http1
        case http2
    }

    /// The host the connection is for (error messages).
    let host: String
    /// Set by the TLS verifier when it rejected the chain, so the handshake error names why.
    var trustRejection: EngineError?
    /// Set by the TLS verifier when it trusted the chain: the chain, as the server sent it.
    var trustedChain: [[UInt8]]?
    /// The setup error, readable from the connecting task.
    let setupErrorBox: SetupErrorBox
    /// Installs the pipeline for the negotiated protocol after this handler; throws when that fails.
    private let configure: (Negotiated, ChannelHandlerContext) throws -> Void
    /// Whether HTTP/2 was chosen without asking (h2c prior knowledge): no ALPN to wait for.
    private let priorKnowledge: Bool
    private(set) var negotiated: Negotiated?
    private var outcome: Result<Negotiated, EngineError>?
    private var readyPromise: EventLoopPromise<Negotiated>?
    private var context: ChannelHandlerContext?

    init(
        host: String,
        setupErrorBox: SetupErrorBox,
        priorKnowledge: Bool,
        configure: @escaping (Negotiated, ChannelHandlerContext) throws -> Void
    ) {
        self.host = host
        self.setupErrorBox = setupErrorBox
        self.priorKnowledge = priorKnowledge
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if priorKnowledge {
            negotiate(.http2, context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Completes `promise` with the protocol once the connection can carry requests, or with
    /// the setup error.
    func waitUntilReady(promise: EventLoopPromise<Negotiated>) {
        if let outcome {
            promise.completeWith(outcome.mapError { $0 as any Error })
        } else {
            readyPromise = promise
        }
    }

    /// The pipeline for the negotiated protocol is ready (HTTP/1.1 at once; HTTP/2 once the
    /// server's first SETTINGS arrived).
    func markReady() {
        guard outcome == nil, let negotiated else { return }
        complete(.success(negotiated))
    }

    /// Setup failed (called by handlers further down the pipeline too).
    func setupFailed(_ error: EngineError) {
        guard outcome == nil else { return }
        // An earlier, more precise cause (the proxy refusing the tunnel) wins.
        let error = setupErrorBox.value ?? error
        setupErrorBox.set(error)
        complete(.failure(error))
        context?.close(promise: nil)
    }

    private func complete(_ result: Result<Negotiated, EngineError>) {
        outcome = result
        if let readyPromise {
            self.readyPromise = nil
            readyPromise.completeWith(result.mapError { $0 as any Error })
        }
    }

    private func negotiate(_ protocolChoice: Negotiated, context: ChannelHandlerContext) {
        guard negotiated == nil else { return }
        negotiated = protocolChoice
        do {
            try configure(protocolChoice, context)
        } catch {
            setupFailed(EngineErrorMapping.map(error, host: host))
            return
        }
        if protocolChoice == .http1 {
            markReady()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !priorKnowledge, let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted(let proto) = tlsEvent {
            // Configure before passing the event on: bytes after the handshake (the server's
            // SETTINGS) must find the right handlers.
            negotiate(proto == "h2" ? .http2 : .http1, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if outcome == nil {
            setupFailed(trustRejection ?? EngineErrorMapping.map(error, host: host))
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if outcome == nil {
            setupFailed(.connectionLost("the connection closed during setup"))
        }
        context.fireChannelInactive()
    }
}
