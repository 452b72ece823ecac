import NIOCore

/// Finds where HTTP/2 frames end in the bytes a connection receives, however they are split
/// into reads, and cuts each read into slices made of whole frames: consecutive frames are
/// grouped up to a target size, a frame larger than the target is a slice of its own, and a
/// frame that continues in the next read ends the read as a slice of its own.
///
/// Pure logic: it reads only the 9-byte frame headers (the 24-bit length in their first three
/// bytes) and keeps the few bytes of a header split across reads. Bytes that are not frames
/// (a broken peer) only move the cut points; they are never changed or dropped.
struct HTTP2FrameBoundaries {
    /// The size of a frame header.
    static let headerSize = 9

    /// The bytes of the current frame still to come (its header included) once its header is
    /// known; 0 while a header is being read.
    private var remaining = 0
    /// The current frame's header bytes seen so far (fewer than 9), while it is being read.
    private var header: [UInt8] = []

    /// The lengths of the slices `buffer`'s readable bytes are cut into (they add up to its
    /// readable bytes; none is empty), given the frames before it.
    mutating func sliceLengths(of buffer: ByteBuffer, target: Int) -> [Int] {
        var lengths: [Int] = []
        sliceLengths(of: buffer, target: target, into: &lengths)
        return lengths
    }

    /// ``sliceLengths(of:target:)`` into an array the caller reuses (emptied first).
    mutating func sliceLengths(of buffer: ByteBuffer, target: Int, into lengths: inout [Int]) {
        lengths.removeAll(keepingCapacity: true)
        let count = buffer.readableBytes
        var offset = 0
        var sliceStart = 0
        // Where the last whole frame in the slice being built ended (== sliceStart: none yet).
        var lastFrameEnd = 0
        while offset < count {
            if remaining == 0, header.isEmpty, count - offset >= Self.headerSize,
                let high = buffer.getInteger(at: buffer.readerIndex + offset, as: UInt8.self),
                let low = buffer.getInteger(at: buffer.readerIndex + offset + 1, as: UInt16.self)
            {
                // A whole header in this read (the usual case): no copy of its bytes.
                offset += Self.headerSize
                remaining = Int(high) << 16 | Int(low)
            } else if remaining == 0 {
                let wanted = min(Self.headerSize - header.count, count - offset)
                if let bytes = buffer.getBytes(at: buffer.readerIndex + offset, length: wanted) {
                    header.append(contentsOf: bytes)
                }
                offset += wanted
                guard header.count == Self.headerSize else { continue }
                let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
                header.removeAll(keepingCapacity: true)
                remaining = length
            } else {
                let step = min(remaining, count - offset)
                offset += step
                remaining -= step
            }
            guard remaining == 0, header.isEmpty else { continue }
            // A frame ended at `offset`.
            if offset - sliceStart > target, lastFrameEnd > sliceStart {
                lengths.append(lastFrameEnd - sliceStart)
                sliceStart = lastFrameEnd
            }
            if offset - sliceStart >= target {
                lengths.append(offset - sliceStart)
                sliceStart = offset
            }
            lastFrameEnd = offset
        }
        // The rest: whole frames, then the start of one that continues in the next read.
        if lastFrameEnd > sliceStart, lastFrameEnd < count {
            lengths.append(lastFrameEnd - sliceStart)
            sliceStart = lastFrameEnd
        }
        if count > sliceStart {
            lengths.append(count - sliceStart)
        }
    }
}
