import Courier
import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes a response to stdout as it arrives (``URLSessionManager/bytes(for:body:)``), so a
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
    static func send(_ prepared: PreparedRequest, with manager: URLSessionManager, printer: ExchangePrinter) async throws
        -> Exchange
    {
        let body: RequestBody? = prepared.bodyFile.map { .file(path: $0.url.path) }
        let (response, stream) = try await manager.bytes(for: prepared.urlRequest, body: body)
        let output = FileHandle.standardOutput
        let options = printer.options
        if options.responseHeaders {
            try output.write(contentsOf: Data(printer.responseHead(response).utf8))
        }
        guard options.responseBody else {
            stream.cancel()
            return Exchange(response: response)
        }
        var chunks = stream.makeAsyncIterator()
        if options.format || options.colors {
            // Gather what can be formatted; past the limit, what was gathered goes out raw first.
            let limit = manager.configuration.maximumResponseBodySize ?? SessionConfiguration.defaultMaximumResponseBodySize
            var gathered = Data()
            while let chunk = try await chunks.next() {
                gathered.append(chunk)
                if Int64(gathered.count) > limit { break }
            }
            if Int64(gathered.count) <= limit {
                try output.write(contentsOf: printer.body(gathered))
                return Exchange(response: response, metrics: stream.task?.metrics)
            }
            var raw = RawWriter(output: output, isTerminal: options.isTerminal)
            guard try raw.write(gathered) else { return Exchange(response: response) }
            return try await finishRaw(&chunks, raw: &raw, response: response, stream: stream)
        }
        var raw = RawWriter(output: output, isTerminal: options.isTerminal)
        return try await finishRaw(&chunks, raw: &raw, response: response, stream: stream)
    }

    /// Writes the rest of the body raw.
    private static func finishRaw(
        _ chunks: inout ResponseBodyStream.AsyncIterator, raw: inout RawWriter, response: HTTPURLResponse,
        stream: ResponseBodyStream
    ) async throws -> Exchange {
        while let chunk = try await chunks.next() {
            guard try raw.write(chunk) else {
                stream.cancel()
                return Exchange(response: response)
            }
        }
        try raw.end()
        return Exchange(response: response, metrics: stream.task?.metrics)
    }

    /// Raw body bytes to stdout; on a terminal, binary data is replaced by the note.
    private struct RawWriter {
        let output: FileHandle
        let isTerminal: Bool
        var lastByte: UInt8?

        init(output: FileHandle, isTerminal: Bool) {
            self.output = output
            self.isTerminal = isTerminal
        }

        /// Writes `chunk`; false when it was binary on a terminal (the note was written instead
        /// and nothing more should be).
        mutating func write(_ chunk: Data) throws -> Bool {
            if isTerminal, chunk.contains(0) {
                let separator = lastByte == nil || lastByte == UInt8(ascii: "\n") ? "" : "\n"
                try output.write(contentsOf: Data((separator + ExchangePrinter.binaryNote + "\n").utf8))
                return false
            }
            try output.write(contentsOf: chunk)
            lastByte = chunk.last ?? lastByte
            return true
        }

        /// A terminal gets a final newline after text.
        func end() throws {
            if isTerminal, let lastByte, lastByte != UInt8(ascii: "\n") {
                try output.write(contentsOf: Data("\n".utf8))
            }
        }
    }
}
