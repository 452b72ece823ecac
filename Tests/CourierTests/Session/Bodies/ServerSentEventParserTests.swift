@testable import Courier
import Testing

/// The event-stream rules and the line cutting under them, with plain values.
@Suite("server-sent event parsing")
struct ServerSentEventParserTests {
    private func events(_ lines: [String], limit: Int = 1 << 20) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser(maximumDataLength: limit)
        return try lines.compactMap { try parser.consume($0) }
    }

    private func split(_ chunks: [String], limit: Int = 1 << 20) throws -> [String] {
        var splitter = LineSplitter(maximumLineLength: limit)
        var lines: [String] = []
        for chunk in chunks { lines += try splitter.append(Array(chunk.utf8)) }
        if let last = splitter.finish() { lines.append(last) }
        return lines
    }

    @Test func fieldsCommentsAndDispatch() throws {
        #expect(try events([": comment", "data: a", "data:b", "data", "", "event: x", "", "data: c", "id: 1", "retry: 20", ""]) == [
            ServerSentEvent(data: "a\nb\n"),
            ServerSentEvent(data: "c", id: "1", retry: 20),
        ])
    }

    @Test func onlyOneSpaceAfterTheColonIsDropped() throws {
        #expect(try events(["data:  two spaces", ""]) == [ServerSentEvent(data: " two spaces")])
    }

    @Test func idCarriesOverAndNulIdsAreIgnored() throws {
        #expect(try events(["id: a", "data: 1", "", "id: b\u{0}c", "data: 2", "", "id", "data: 3", ""]) == [
            ServerSentEvent(data: "1", id: "a"),
            ServerSentEvent(data: "2", id: "a"),
            ServerSentEvent(data: "3", id: ""),
        ])
    }

    @Test func badRetryAndUnknownFieldsAreIgnored() throws {
        #expect(try events(["retry: 1x", "retry: -5", "foo: bar", "data: x", ""]) == [ServerSentEvent(data: "x")])
    }

    @Test func aLeadingByteOrderMarkIsDropped() throws {
        #expect(try events(["\u{FEFF}data: x", "", "\u{FEFF}data: y", ""]).map(\.data) == ["x"])
    }

    @Test func anEventWithoutDataIsNotDispatched() throws {
        #expect(try events(["event: ping", "", "", "data: after", ""]) == [ServerSentEvent(data: "after")])
    }

    @Test func anEventsDataIsBoundedAcrossItsLines() throws {
        // "12345" + "\n" + "6789" is 10 bytes: accepted; one more byte is refused, and the
        // count starts again after each dispatched event.
        #expect(try events(["data: 12345", "data: 6789", "", "data: 12345", "data: 6789", ""], limit: 10).map(\.data) == [
            "12345\n6789", "12345\n6789",
        ])
        #expect(throws: ServerSentEventParser.EventTooLong(length: 11)) {
            _ = try events(["data: 12345", "data: 67890", ""], limit: 10)
        }
        #expect(throws: ServerSentEventParser.EventTooLong(length: 11)) {
            _ = try events(Array(repeating: "data:", count: 12), limit: 10)
        }
    }

    @Test func retryOverflowIsIgnored() throws {
        #expect(try events(["retry: 99999999999999999999999", "data: x", ""]) == [ServerSentEvent(data: "x")])
    }

    @Test func linesEndInLFCRLFOrCREvenAcrossChunks() throws {
        #expect(try split(["a\r", "\nb\rc\n", "\r\n", "tail"]) == ["a", "b", "c", "", "tail"])
        #expect(try split(["\r\r\n"]) == ["", ""])
        #expect(try split(["x\n"]) == ["x"])
        #expect(try split(["caf", "\u{E9}\n"]) == ["café"])
    }

    @Test func aLineLongerThanTheLimitIsRefused() throws {
        #expect(try split(["12345\n"], limit: 5) == ["12345"])
        #expect(throws: LineSplitter.LineTooLong(length: 6)) { _ = try split(["123", "456\n"], limit: 5) }
    }
}
