import NIOCore
import NIOHPACK
import NIOHTTP2

/// Serves the HTTP/2 stream fault endpoints at the frame level (in front of the HTTP/1 codec of
/// one stream); every other request passes through untouched.
///
/// - `/h2/reset`: a 200 head announcing 1 MiB, 32 KiB of body, then `RST_STREAM`
///   (`INTERNAL_ERROR`): a stream reset mid-body.
/// - `/h2/huge-header?bytes=N`: a 200 whose header block carries one `x-huge` header of N bytes
///   (default 1 MiB), past any sane client's header-list limit.
///
/// The connection-level faults (GOAWAY after N streams, one stream at a time, a window that
/// never opens) are ``TestServer/HTTP2Options``; after its `GOAWAY` the handler refuses each
/// later stream.
final class HTTP2FaultHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// The largest `x-huge` header served.
    static let maximumHugeHeader = 16 << 20

    private let registry: ConnectionRegistry
    /// Writes frame bytes below `NIOHTTP2Handler` (its encoder can't split a header block
    /// into CONTINUATION frames, so the huge block is framed here).
    private let rawWriter: RawWriter?
    /// Refuse this stream (`RST_STREAM` `REFUSED_STREAM`) without processing it.
    private let refuse: Bool
    private var handled = false

    init(registry: ConnectionRegistry, rawWriter: RawWriter? = nil, refuse: Bool = false) {
        self.registry = registry
        self.rawWriter = rawWriter
        self.refuse = refuse
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if handled { return }
        if refuse {
            handled = true
            context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
            return
        }
        guard case .headers(let headers) = unwrapInboundIn(data), let path = headers.headers.first(name: ":path") else {
            context.fireChannelRead(data)
            return
        }
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let route = parts.first.map(String.init) ?? path
        let query = parts.count > 1 ? String(parts[1]) : ""
        switch route {
        case "/h2/reset":
            handled = true
            registry.requestReceived(target: path)
            let head = HPACKHeaders([(":status", "200"), ("content-type", "application/octet-stream"), ("content-length", "1048576")])
            context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
            let body = context.channel.allocator.buffer(repeating: UInt8(ascii: "r"), count: 32 * 1024)
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body)))), promise: nil)
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(50)) {
                context.writeAndFlush(self.wrapOutboundOut(.rstStream(.internalError)), promise: nil)
            }
        case "/h2/huge-header":
            handled = true
            registry.requestReceived(target: path)
            let requested = query.split(separator: "&").compactMap { item -> Int? in
                let pair = item.split(separator: "=", maxSplits: 1)
                return pair.count == 2 && pair[0] == "bytes" ? Int(pair[1]) : nil
            }.first ?? (1 << 20)
            let size = min(max(requested, 1), Self.maximumHugeHeader)
            guard let rawWriter, let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
            else {
                context.close(promise: nil)
                return
            }
            rawWriter.write(Self.hugeHeaderFrames(streamID: Int(streamID), valueSize: size))
        default:
            context.fireChannelRead(data)
        }
    }

    /// A HEADERS frame and as many CONTINUATION frames as needed (16 KiB each) carrying
    /// `:status: 200` and an `x-huge` header of `valueSize` bytes, ending the stream. HPACK
    /// literals without indexing and without Huffman coding: no shared table state changes.
    static func hugeHeaderFrames(streamID: Int, valueSize: Int) -> [UInt8] {
        var block: [UInt8] = [0x88]  // :status 200 (static table index 8)
        block.append(0x00)  // literal without indexing, new name
        appendString(Array("x-huge".utf8), to: &block)
        appendString(Array(repeating: UInt8(ascii: "h"), count: valueSize), to: &block)
        var frames: [UInt8] = []
        let maximumFrame = 16_384
        var offset = 0
        var first = true
        while offset < block.count || first {
            let end = min(block.count, offset + maximumFrame)
            let last = end == block.count
            let type: UInt8 = first ? 0x1 : 0x9
            var flags: UInt8 = last ? 0x4 : 0
            if first { flags |= 0x1 }  // END_STREAM on the HEADERS frame
            let length = end - offset
            frames += [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            frames += [UInt8(streamID >> 24 & 0x7F), UInt8(streamID >> 16 & 0xFF), UInt8(streamID >> 8 & 0xFF), UInt8(streamID & 0xFF)]
            frames += block[offset..<end]
            offset = end
            first = false
        }
        return frames
    }

    /// An HPACK string literal, not Huffman coded (RFC 7541 §5.2), with its 7-bit prefix length.
    private static func appendString(_ bytes: [UInt8], to block: inout [UInt8]) {
        var length = bytes.count
        if length < 127 {
            block.append(UInt8(length))
        } else {
            block.append(127)
            length -= 127
            while length >= 128 {
                block.append(UInt8(length & 0x7F) | 0x80)
                length >>= 7
            }
            block.append(UInt8(length))
        }
        block += bytes
    }
}
