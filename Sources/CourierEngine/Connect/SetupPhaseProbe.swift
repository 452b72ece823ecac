import NIOCore

/// Notes in a ``ConnectionSetupProgress`` that the setup reached a step, when `channelActive`
/// passes it: the first in the pipeline sees the TCP connect end; one after a proxy's handshake
/// handler sees the tunnel open (those handlers hold `channelActive` back until it is). Passes
/// every event on unchanged.
final class SetupPhaseProbe: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let progress: ConnectionSetupProgress
    private let phase: ConnectionSetupPhase

    /// `phase`: the step that begins when `channelActive` reaches this handler.
    init(progress: ConnectionSetupProgress, phase: ConnectionSetupPhase) {
        self.progress = progress
        self.phase = phase
    }

    func channelActive(context: ChannelHandlerContext) {
        progress.advance(to: phase)
        context.fireChannelActive()
    }
}
