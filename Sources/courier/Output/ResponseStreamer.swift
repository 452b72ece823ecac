import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes a response to stdout as it arrives (``URLSessionManager/bytes(for:body:interceptor:)``), so a
/// body of any size passes through in bounded memory.
///
/// - Raw output: every chunk is written as it comes. On a terminal, as HTTPie does when it
///   streams, a chunk holding a NUL byte ends the output with the binary note and cancels the
///   transfer, and text gets a final newline.
/// - `--pretty` formatting or colours: the body is gathered up to the session's
///   ``SessionConfiguration/maximumResponseBodySize`` and printed by ``ExchangePrinter`` as
///   before; a longer body is written raw from there on (it is not formatted, but it is never
///   held whole).
/// - `--print` without `b`: the transfer is cancelled once the head is printed.
/// - `--stream` with `--pretty` (or any `text/event-stream` response, as in HTTPie): every
///   chunk is written as it arrives; complete lines that are JSON are formatted one by one,
///   anything else is written as it is.
enum ResponseStreamer {
    /// Whether the response to `prepared` goes through here: every request but a multipart
    /// form (those go through a streamed upload task, which can rebuild the form for a redirect).
    static func applies(to prepared: PreparedRequest) -> Bool {
        prepared.multipart == nil
    }

    /// Sends `prepared`, writes the response head (when `printer` shows heads) and then the body
    /// to stdout. Returns the exchange without its body (already written).
    /// - Throws: the task's ``CourierError`` (before the head, or when the body breaks off: what
    ///   arrived until then is already written), or a write error on stdout.
    static func send(
        _ prepared: PreparedRequest, body override: RequestBody? = nil, with manager: URLSessionManager,
        printer: ExchangePrinter, streaming: Bool = false
    ) async throws -> Exchange {
        let body: RequestBody? = override ?? prepared.bodyFile.map { .file(path: $0.url.path) }
        let (response, stream) = try await manager.bytes(for: prepared.urlRequest, body: body)
        let options = printer.options
        if options.responseHeaders {
            StandardStreams.writeOutput(Data(printer.responseHead(ResponseHead(task: stream.task, response: response)).utf8))
        }
        guard options.responseBody else {
            stream.cancel()
            return Exchange(response: response, task: stream.task)
        }
        var chunks = stream.makeAsyncIterator()
        // HTTPie streams server-sent events even without --stream.
        let isEventStream = response.mimeType?.lowercased() == "text/event-stream"
        if (streaming || isEventStream) && (options.format || options.colors) {
            var lines = LineFormatter(printer: printer)
            while let chunk = try await chunks.next() {
                StandardStreams.writeOutput(lines.take(chunk))
            }
            StandardStreams.writeOutput(lines.finish())
            return Exchange(response: response, metrics: stream.task?.metrics, task: stream.task)
        }
        if options.format || options.colors {
            // Gather what can be formatted; past the limit, what was gathered goes out raw first.
            let limit = manager.configuration.maximumResponseBodySize ?? SessionConfiguration.defaultMaximumResponseBodySize
            var gathered = Data()
            while let chunk = try await chunks.next() {
                gathered.append(chunk)
                if Int64(gathered.count) > limit { break }
            }
            if Int64(gathered.count) <= limit {
                StandardStreams.writeOutput(printer.body(gathered))
                return Exchange(response: response, metrics: stream.task?.metrics, task: stream.task)
            }
            var raw = RawWriter(isTerminal: options.isTerminal)
            guard raw.write(gathered) else { return Exchange(response: response, task: stream.task) }
            return try await finishRaw(&chunks, raw: &raw, response: response, stream: stream)
        }
        var raw = RawWriter(isTerminal: options.isTerminal)
        return try await finishRaw(&chunks, raw: &raw, response: response, stream: stream)
    }

    /// Writes the rest of the body raw.
    private static func finishRaw(
        _ chunks: inout ResponseBodyStream.AsyncIterator, raw: inout RawWriter, response: HTTPURLResponse,
        stream: ResponseBodyStream
    ) async throws -> Exchange {
        while let chunk = try await chunks.next() {
            guard raw.write(chunk) else {
                stream.cancel()
                return Exchange(response: response, task: stream.task)
            }
        }
        raw.end()
        return Exchange(response: response, metrics: stream.task?.metrics, task: stream.task)
    }

    /// Raw body bytes to stdout; on a terminal, binary data is replaced by the note.
    private struct RawWriter {
        let isTerminal: Bool
        var lastByte: UInt8?

        init(isTerminal: Bool) {
            self.isTerminal = isTerminal
        }

        /// Writes `chunk`; false when it was binary on a terminal (the note was written instead
        /// and nothing more should be).
        mutating func write(_ chunk: Data) -> Bool {
            if isTerminal, chunk.contains(0) {
                let separator = lastByte == nil || lastByte == UInt8(ascii: "\n") ? "" : "\n"
                StandardStreams.writeOutput(Data((separator + ExchangePrinter.binaryNote + "\n").utf8))
                return false
            }
            StandardStreams.writeOutput(chunk)
            lastByte = chunk.last ?? lastByte
            return true
        }

        /// A terminal gets a final newline after text.
        func end() {
            if isTerminal, let lastByte, lastByte != UInt8(ascii: "\n") {
                StandardStreams.writeOutput(Data("\n".utf8))
            }
        }
    }
}

/// `--stream --pretty`: complete lines that are JSON documents are formatted one at a time;
/// other text is passed on as soon as it arrives (a body without newlines, such as a drip, is
/// never held back). Pure apart from the printer's formatting.
struct LineFormatter {
    let printer: ExchangePrinter
    /// The longest line held back to be formatted; a longer one goes out as it came.
    let maximumLine: Int
    /// Bytes of a line that may be JSON, waiting for its newline.
    private var pending = Data()
    /// The start of the current line went out raw (too long, or it can't be JSON): the rest
    /// of it does too.
    private var passing = false
    /// The first non-blank byte of `pending`, once one has arrived.
    private var lineStart: UInt8?

    /// - Parameter maximumLine: default 1 MiB (a line from the server is otherwise held whole).
    init(printer: ExchangePrinter, maximumLine: Int = 1 << 20) {
        self.printer = printer
        self.maximumLine = maximumLine
    }

    /// What to write now for `chunk`. Costs the chunk's length (and the lines it ends), not
    /// the length of the line held so far: `pending` is known to hold no newline, and its
    /// first byte that is not blank, once seen, stays its first.
    mutating func take(_ chunk: Data) -> Data {
        let known = pending.count
        pending.append(chunk)
        var out = Data()
        var start = pending.startIndex
        var searchFrom = pending.startIndex + known
        while let newline = pending[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = Data(pending[start..<newline])
            out += (passing ? line : formatted(line)) + Data("\n".utf8)
            passing = false
            lineStart = nil
            start = newline + 1
            searchFrom = start
        }
        let endedLines = start != pending.startIndex
        if endedLines { pending = Data(pending[start...]) }
        if passing || pending.count > maximumLine {
            passing = !pending.isEmpty || passing
            out += pending
            pending = Data()
        }
        // A partial line that can't be the start of a JSON document goes out now, and the rest
        // of that line too (a tail that looks like JSON is still part of it). Only bytes not
        // looked at yet are searched for the line's first non-blank byte.
        if lineStart == nil {
            let from = pending.startIndex + (endedLines ? 0 : min(known, pending.count))
            lineStart = pending[from...].first { ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r")].contains($0) }
        }
        if let first = lineStart, first != UInt8(ascii: "{"), first != UInt8(ascii: "[") {
            out += pending
            pending = Data()
            passing = true
        }
        return out
    }

    /// What is left at the end of the body.
    mutating func finish() -> Data {
        defer { pending = Data() }
        return pending.isEmpty || passing ? pending : formatted(pending)
    }

    private func formatted(_ line: Data) -> Data {
        guard JSONFormatter.format(line, indent: 0, colors: false) != nil else { return line }
        var body = printer.body(line)
        if body.last == UInt8(ascii: "\n") { body.removeLast() }
        return body
    }
}
