import Courier
import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes a response to stdout as it arrives (``URLSessionManager/bytes(for:body:)``), so a
/// body of any size passes through in bounded memory. Used for the raw output path: stdout is
/// not a terminal (no binary note to decide) and nothing is formatted or coloured (those
/// buffer the body, up to the session's ``SessionConfiguration/maximumResponseBodySize``).
enum ResponseStreamer {
    /// Whether the response to `prepared` can be streamed with `options`: the body is printed
    /// raw, and the request is not a multipart form (those go through an upload task).
    static func applies(to prepared: PreparedRequest, options: OutputOptions) -> Bool {
        options.responseBody && !options.isTerminal && !options.format && !options.colors && prepared.multipart == nil
    }

    /// Sends `prepared`, writes the response head (when `printer` shows heads) and then the body
    /// to stdout chunk by chunk. Returns the exchange without its body (already written).
    /// - Throws: the task's ``CourierError`` (before the head, or when the body breaks off: what
    ///   arrived until then is already written), or a write error on stdout.
    static func send(_ prepared: PreparedRequest, with manager: URLSessionManager, printer: ExchangePrinter) async throws
        -> Exchange
    {
        let body: RequestBody? = prepared.bodyFile.map { .file(path: $0.url.path) }
        let (response, stream) = try await manager.bytes(for: prepared.urlRequest, body: body)
        let output = FileHandle.standardOutput
        if printer.options.responseHeaders {
            try output.write(contentsOf: Data(printer.responseHead(response).utf8))
        }
        for try await chunk in stream {
            try output.write(contentsOf: chunk)
        }
        return Exchange(response: response, metrics: stream.task?.metrics)
    }
}
