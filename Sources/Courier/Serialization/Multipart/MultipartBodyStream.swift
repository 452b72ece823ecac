import Foundation

/// AFNetworking's `AFMultipartBodyStream`: an `InputStream` that reads a multipart body part
/// by part, synchronously, holding at most one packet in memory. Made by
/// ``MultipartFormData/makeInputStream()``.
///
/// Not `Sendable` and not thread-safe, like any `InputStream`: one reader at a time.
final class MultipartBodyStream: InputStream {
    /// A piece of the body: framing bytes, or a part's content.
    enum Segment {
        case data(Data)
        case part(MultipartBodyPart)

        var length: Int64 {
            switch self {
            case .data(let data): Int64(data.count)
            case .part(let part): part.length
            }
        }
    }

    private var segments: [Segment]
    private var segmentIndex = 0
    private var pending = Data()
    private var openFile: FileHandle?
    private var remainingInPart: Int64 = 0
    private var partStarted = false
    private let packetSize: Int
    private let delay: TimeInterval
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    init(segments: [Segment], packetSize: Int, delay: TimeInterval) {
        self.segments = segments
        self.packetSize = max(1, packetSize)
        self.delay = delay
        super.init(data: Data())
    }

    override func open() {
        if status == .notOpen { status = segments.isEmpty ? .atEnd : .open }
    }

    override func close() {
        try? openFile?.close()
        openFile = nil
        status = .closed
    }

    override var streamStatus: Stream.Status { status }

    override var streamError: (any Error)? { failure }

    override var hasBytesAvailable: Bool { status == .open }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        false
    }

    /// Reads one packet, then (when throttled) sleeps the throttle's delay: the blocking
    /// contract of a synchronous `InputStream`, as AFN's. The session does not call this: it
    /// reads with ``readPacket(_:maxLength:)`` off the cooperative pool and pauses with
    /// `Task.sleep`, holding no thread.
    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        let count = readPacket(buffer, maxLength: len)
        if count > 0, delay > 0 { Thread.sleep(forTimeInterval: delay) }
        return count
    }

    /// The pause, in seconds, a throttled reader makes after each packet (0: none).
    var throttleDelay: TimeInterval { delay }

    /// `read(_:maxLength:)` without the throttle's pause: at most one packet.
    func readPacket(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open else { return status == .error ? -1 : 0 }
        let limit = min(len, packetSize)
        do {
            while pending.isEmpty {
                guard let next = try nextChunk(maxLength: limit) else {
                    status = .atEnd
                    return 0
                }
                pending = next
            }
        } catch {
            failure = error
            status = .error
            return -1
        }
        let count = min(limit, pending.count)
        pending.copyBytes(to: buffer, count: count)
        pending = pending.count == count ? Data() : Data(pending.dropFirst(count))
        return count
    }

    /// The next bytes of the body, or nil at its end.
    private func nextChunk(maxLength: Int) throws -> Data? {
        while segmentIndex < segments.count {
            switch segments[segmentIndex] {
            case .data(let data):
                segmentIndex += 1
                if !data.isEmpty { return data }
            case .part(let part):
                if !partStarted {
                    // The caller's number: a negative one would overflow `remainingInPart`.
                    guard part.length >= 0 else {
                        throw CourierError.requestSerializationFailed(
                            .bodyStreamFailed("a part declares a negative length (\(part.length) bytes)"))
                    }
                    partStarted = true
                    remainingInPart = part.length
                }
                if let chunk = try readPart(part, maxLength: maxLength) { return chunk }
                guard remainingInPart == 0 else {
                    throw CourierError.requestSerializationFailed(
                        .bodyStreamFailed("a part ended \(remainingInPart) bytes before its declared length"))
                }
                try? openFile?.close()
                openFile = nil
                partStarted = false
                segmentIndex += 1
            }
        }
        return nil
    }

    /// Up to `maxLength` bytes of `part`, or nil when it is exhausted.
    private func readPart(_ part: MultipartBodyPart, maxLength: Int) throws -> Data? {
        let chunk: Data?
        switch part.source {
        case .data(let data):
            // A slice keeps its parent's indices: offsets count from its own startIndex.
            let start = data.startIndex + Int(part.length - remainingInPart)
            chunk = start < data.endIndex ? data.subdata(in: start..<min(data.endIndex, start + maxLength)) : nil
        case .file(let path, let appended):
            if openFile == nil {
                openFile = try MultipartFileReader.open(path, appended: appended)
            }
            guard remainingInPart > 0, let handle = openFile else { return nil }
            let data = try handle.read(upToCount: Int(min(Int64(maxLength), remainingInPart))) ?? Data()
            chunk = data.isEmpty ? nil : data
        case .inputStream(let box):
            chunk = try box.readChunk(maxLength: maxLength)
        case .produced:
            throw CourierError.requestSerializationFailed(
                .bodyStreamFailed("an async-sequence part can't be read through an InputStream; use makeRequestBody()"))
        }
        guard let chunk else { return nil }
        remainingInPart -= Int64(chunk.count)
        guard remainingInPart >= 0 else {
            throw CourierError.requestSerializationFailed(.bodyStreamFailed("a part is longer than its declared length"))
        }
        return chunk
    }
}
