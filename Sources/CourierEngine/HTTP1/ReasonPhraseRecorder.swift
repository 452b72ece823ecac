import NIOCore
import NIOHTTP1

/// Keeps the server's own reason phrase, which NIO's `HTTPResponseDecoder` drops: sits just
/// before the decoder in an HTTP/1 pipeline and, when a response is due to start (at first,
/// and again after each response's end or interim head), reads the status line at the start
/// of the next bytes (``StatusLineReasonPhrase``). ``HTTP1ConnectionHandler`` then swaps the
/// decoded head's status for the recorded one only when the codes agree; anything else (a status
/// line split across reads, a 1xx and the final head in one read, odd bytes) keeps the standard
/// phrase, never a wrong one.
///
/// Costs one flag test per read, a bounded scan of the first read of each response, and an
/// allocation only for a phrase that is not the standard one. Event-loop confined.
final class ReasonPhraseRecorder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Whether the next read starts a response.
    private var expectingResponse = true
    private var recorded: (code: Int, reasonPhrase: String)?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if expectingResponse {
            expectingResponse = false
            recorded = StatusLineReasonPhrase.customPhrase(atStartOf: unwrapInboundIn(data).readableBytesView)
        }
        context.fireChannelRead(data)
    }

    /// Called with each decoded head: gives a final head the recorded phrase when its code
    /// matches, and after an interim (1xx) head expects the next head at the next read.
    func restorePhrase(in head: inout HTTPResponseHead) {
        let code = Int(head.status.code)
        if code < 200 {
            // Interim heads keep NIO's status (the state machine compares them by value).
            expectingResponse = code != 101
            recorded = nil
            return
        }
        guard let recorded else { return }
        self.recorded = nil
        if recorded.code == code {
            head.status = .custom(code: UInt(code), reasonPhrase: recorded.reasonPhrase)
        }
    }

    /// Called at each response's end: the next read starts the next response.
    func responseEnded() {
        expectingResponse = true
        recorded = nil
    }
}
