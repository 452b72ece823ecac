import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cuts bytes into lines ending in LF, CR LF or a lone CR (the terminators `text/event-stream`
/// allows; JSON lines use LF), with a bound on a line's length. Chunks may split a line or a
/// CR LF pair anywhere. Pure logic, no I/O.
struct LineSplitter: Sendable {
    /// The longest line accepted, in bytes.
    let maximumLineLength: Int
    private var pending: [UInt8] = []
    private var lastWasCR = false

    init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    /// A line longer than ``maximumLineLength`` (its bytes so far).
    struct LineTooLong: Error, Equatable {
        let length: Int
    }

    /// The lines `bytes` completes (decoded as UTF-8, invalid bytes replaced).
    /// - Throws: ``LineTooLong`` when a line grows past the bound.
    mutating func append<Bytes: Sequence>(_ bytes: Bytes) throws(LineTooLong) -> [String] where Bytes.Element == UInt8 {
        var lines: [String] = []
        for byte in bytes {
            if lastWasCR {
                lastWasCR = false
                if byte == 0x0A { continue }  // the LF of a CR LF already ended the line
            }
            switch byte {
            case 0x0A:
                lines.append(takeLine())
            case 0x0D:
                lines.append(takeLine())
                lastWasCR = true
            default:
                guard pending.count < maximumLineLength else { throw LineTooLong(length: pending.count + 1) }
                pending.append(byte)
            }
        }
        return lines
    }

    /// The last line when the bytes ended without a terminator, else nil.
    mutating func finish() -> String? {
        pending.isEmpty ? nil : takeLine()
    }

    private mutating func takeLine() -> String {
        defer { pending.removeAll(keepingCapacity: true) }
        return String(decoding: pending, as: UTF8.self)
    }
}

/// A response body as lines of text (``ResponseBodyStream/lines``): JSON lines, long-poll
/// answers, or any line protocol. Lines end in LF, CR LF or CR; the terminator is not part of
/// the line; a last line without one is given too. Bytes are decoded as UTF-8 (invalid
/// sequences become U+FFFD). Backpressure and cancellation are the body stream's: iterating
/// slowly pauses the server, dropping the iteration cancels the request. Iterate once.
public struct ResponseBodyLines: AsyncSequence, Sendable {
    /// A line, without its terminator.
    public typealias Element = String

    let body: ResponseBodyStream
    let maximumLineLength: Int

    /// Iterates the lines.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: ResponseBodyStream.AsyncIterator
        var splitter: LineSplitter
        var ready: [String] = []
        var ended = false
        let body: ResponseBodyStream

        /// The next line, or nil at the end of the body.
        /// - Throws: the transfer's error; ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)``
        ///   for a line longer than the limit (the request is then cancelled).
        public mutating func next() async throws -> String? {
            while ready.isEmpty {
                if ended { return nil }
                guard let chunk = try await chunks.next() else {
                    ended = true
                    return splitter.finish()
                }
                do {
                    ready = try splitter.append(chunk)
                } catch {
                    body.cancel()
                    ended = true
                    throw CourierError.responseBodyTooLarge(
                        url: body.task?.currentRequest?.url, limit: Int64(splitter.maximumLineLength), contentLength: nil,
                        received: Int64(error.length))
                }
                ready.reverse()
            }
            return ready.popLast()
        }
    }

    /// Makes the iterator (iterate once).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: body.makeAsyncIterator(), splitter: LineSplitter(maximumLineLength: maximumLineLength), body: body)
    }
}

/// A `text/event-stream` body as ``ServerSentEvent`` values (``ResponseBodyStream/events``),
/// parsed as `EventSource` does. An event is given when its blank line arrives; an event the
/// body ends in the middle of is dropped. One response only: for a stream that reconnects and
/// resumes with `Last-Event-ID`, use ``EventSource``
/// (``URLSessionManager/eventSource(for:configuration:interceptor:)``). Iterate once.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent

    let lines: ResponseBodyLines

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var lines: ResponseBodyLines.AsyncIterator
        var parser: ServerSentEventParser

        /// The next event, or nil at the end of the body.
        /// - Throws: as ``ResponseBodyLines/AsyncIterator/next()``; also
        ///   ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)`` for an
        ///   event whose data lines together pass the line limit (the request is then cancelled).
        public mutating func next() async throws -> ServerSentEvent? {
            while let line = try await lines.next() {
                do {
                    if let event = try parser.consume(line) { return event }
                } catch {
                    lines.body.cancel()
                    lines.ended = true
                    throw CourierError.responseBodyTooLarge(
                        url: lines.body.task?.currentRequest?.url, limit: Int64(parser.maximumDataLength), contentLength: nil,
                        received: Int64(error.length))
                }
            }
            return nil
        }
    }

    /// Makes the iterator (iterate once).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lines: lines.makeAsyncIterator(), parser: ServerSentEventParser(maximumDataLength: lines.maximumLineLength))
    }
}

extension ResponseBodyStream {
    /// The body as lines of text (see ``ResponseBodyLines``); a line longer than
    /// `maximumLineLength` bytes (default 1 MiB) fails the iteration and cancels the request,
    /// so a server can't make it buffer without bound.
    ///
    /// ```swift
    /// let stream = try await manager.stream("stream/5")
    /// for try await line in stream.value.lines { print(line) }
    /// ```
    public func lines(maximumLineLength: Int = 1 << 20) -> ResponseBodyLines {
        ResponseBodyLines(body: self, maximumLineLength: Swift.max(1, maximumLineLength))
    }

    /// The body as lines of text, at most 1 MiB each (see ``lines(maximumLineLength:)``).
    public var lines: ResponseBodyLines { lines() }

    /// The body as server-sent events (`text/event-stream`), lines at most 1 MiB each, and an
    /// event's data lines at most 1 MiB together: past either the iteration fails with
    /// ``CourierError/responseBodyTooLarge(url:limit:contentLength:received:)`` and the request
    /// is cancelled.
    ///
    /// ```swift
    /// let feed = try await manager.stream("events", headers: ["Accept": "text/event-stream"])
    /// for try await event in feed.value.events { print(event.event, event.data) }
    /// ```
    public var events: ServerSentEvents { ServerSentEvents(lines: lines) }
}
