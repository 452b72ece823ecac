import NIOCore

/// Sits right before `NIOHTTP2Handler` and hands it the connection's bytes in slices of whole
/// frames of about ``targetSlice`` bytes (no copy: each slice shares the read's storage; the
/// cut points come from ``HTTP2FrameBoundaries``).
///
/// Why: NIOHTTP2's frame decoder keeps one accumulation buffer whose capacity follows the
/// largest read it was given, and every DATA frame it emits is a slice of that buffer. While
/// a slice is still held (a paused stream's buffered frames, a caller that keeps body parts),
/// the decoder's next append copies the whole buffer to a new one of the same capacity, so
/// each few-kilobyte body part kept a buffer of hundreds of kilobytes alive (44x the body),
/// and each read copied that much. Reads of about one frame keep that buffer at 32 KiB. Cutting
/// at frame ends (rather than every 16 KiB) keeps each DATA frame whole, so the caller gets
/// one body part per frame instead of two.
///
/// Event-loop confined.
final class HTTP2ReadSlicer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Frames are grouped into slices of up to this size: the default (and smallest allowed)
    /// HTTP/2 frame size. A larger frame is a slice of its own.
    static let targetSlice = 16_384

    private var boundaries = HTTP2FrameBoundaries()
    /// The current read's slice lengths (kept to reuse its storage).
    private var lengths: [Int] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        boundaries.sliceLengths(of: buffer, target: Self.targetSlice, into: &lengths)
        if lengths.count <= 1 {
            context.fireChannelRead(data)
            return
        }
        // A local copy (no allocation): a re-entrant read would get its own.
        let lengths = self.lengths
        for length in lengths {
            guard let slice = buffer.readSlice(length: length) else { return }
            context.fireChannelRead(wrapInboundOut(slice))
        }
    }
}
