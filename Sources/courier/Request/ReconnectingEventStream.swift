import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--stream --reconnect` (`--reconnect` implies `--stream`): the response is read as
/// server-sent events through ``EventSource``; when the stream ends or drops, the request is
/// sent again after the server's `retry:` (3 s until it sets one), with `Last-Event-ID`, and
/// backs off while the server fails (5xx, 408, 429, connection errors). Each event is printed
/// once, as `text/event-stream` (`id:`, `event:` when not `message`, `data:` lines, a blank
/// line), so the output across reconnections reads as one stream with nothing twice. The head
/// of each connection is printed before its first event when heads are shown.
///
/// It ends with exit 0 when the server answers `204 No Content` (the standard's "stop");
/// another status that can't be an event stream (a 4xx but 408 and 429) or a response that is
/// not `text/event-stream` ends it with an error (exit 1). Interrupt it to stop earlier.
enum ReconnectingEventStream {
    /// Refuses what `--reconnect` can't do: a download, or a body that can't be sent again.
    /// - Throws: ``RequestBuildError`` (exit 2).
    static func check(_ prepared: PreparedRequest, download: Bool) throws {
        if download { throw RequestBuildError(description: "--reconnect can't be used with --download") }
        if prepared.multipart != nil || prepared.bodyFile != nil || prepared.streamsStandardInput {
            throw RequestBuildError(description: "--reconnect sends its request again: use a body given in items, not a file, form or standard input")
        }
    }

    /// Runs the event source until it ends, printing heads and events as they come.
    /// - Returns: the exchange of the last response (the `204` that ended it).
    /// - Throws: the source's ``CourierError`` when it stops on an error.
    static func send(_ prepared: PreparedRequest, with manager: URLSessionManager, printer: ExchangePrinter) async throws -> Exchange {
        let source = manager.eventSource(for: prepared.urlRequest)
        var printedHead: HTTPURLResponse?
        for try await event in source {
            if printer.options.responseHeaders, let response = source.response, response !== printedHead {
                printedHead = response
                StandardStreams.writeOutput(Data(printer.responseHead(ResponseHead(task: nil, response: response)).utf8))
            }
            if printer.options.responseBody {
                StandardStreams.writeOutput(Data(text(of: event).utf8))
            }
        }
        return Exchange(response: source.response)
    }

    /// `event` as `text/event-stream` text, ending with its blank line.
    static func text(of event: ServerSentEvent) -> String {
        var lines: [String] = []
        if let id = event.id, !id.isEmpty { lines.append("id: \(id)") }
        if event.event != "message" { lines.append("event: \(event.event)") }
        for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) { lines.append("data: \(line)") }
        return lines.joined(separator: "\n") + "\n\n"
    }
}
