/// One event of a `text/event-stream` body (server-sent events, as the HTML standard's
/// `EventSource` parses them). See ``ResponseBodyStream/events``.
public struct ServerSentEvent: Sendable, Equatable {
    /// The `event:` field; `"message"` when the event named none.
    public var event: String
    /// The `data:` lines joined with `"\n"`.
    public var data: String
    /// The last `id:` seen in the stream so far (it carries over to later events), nil before any.
    public var id: String?
    /// The `retry:` field (milliseconds to wait before reconnecting), when this event gave one.
    public var retry: Int?

    /// Creates an event.
    public init(event: String = "message", data: String, id: String? = nil, retry: Int? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }
}

/// The event-stream interpretation rules, fed one line at a time (without its terminator):
/// comments (`:`), `field: value` with one optional space after the colon, `data` lines
/// gathered, an empty line dispatching the event (none when it has no data), unknown fields
/// ignored, an `id` holding NUL ignored, a `retry` that is not all ASCII digits ignored. An
/// event's data is bounded (a server that never sends the blank line can't make it grow
/// without end). Pure logic, no I/O.
struct ServerSentEventParser: Sendable {
    /// The most UTF-8 bytes of data (its lines and the `\n` joining them) one event may gather.
    let maximumDataLength: Int
    private var data = ""
    private var dataLength = 0
    private var hasData = false
    private var eventType = ""
    private var lastEventID: String?
    private var retry: Int?
    private var sawFirstLine = false
    /// The last event ID as of the latest dispatch (every empty line, with data or not, as the
    /// standard's "dispatch the event" sets the source's last event ID before it looks at the
    /// data): what a reconnection sends as `Last-Event-ID`. An `id` whose event the stream
    /// ended in the middle of is not committed.
    private(set) var dispatchedLastEventID: String?
    /// The latest valid `retry` field's milliseconds, as soon as it is read (the standard sets
    /// the reconnection time at once, not at dispatch); nil before any.
    private(set) var reconnectionTime: Int?

    /// - Parameters:
    ///   - maximumDataLength: the most UTF-8 bytes of data one event may gather.
    ///   - lastEventID: the last event ID carried over from an earlier connection of the same
    ///     source (events without an `id` of their own carry it, as in browsers); nil for none.
    init(maximumDataLength: Int = 1 << 20, lastEventID: String? = nil) {
        self.maximumDataLength = maximumDataLength
        self.lastEventID = lastEventID
        self.dispatchedLastEventID = lastEventID
    }

    /// An event whose data grew past ``maximumDataLength`` (its length with the refused line).
    struct EventTooLong: Error, Equatable {
        let length: Int
    }

    /// Takes one line; returns the event an empty line completes.
    /// - Throws: ``EventTooLong`` when the event's data would grow past ``maximumDataLength``.
    mutating func consume(_ line: String) throws(EventTooLong) -> ServerSentEvent? {
        var line = Substring(line)
        if !sawFirstLine {
            sawFirstLine = true
            if line.first == "\u{FEFF}" { line = line.dropFirst() }
        }
        if line.isEmpty { return dispatchEvent() }
        if line.first == ":" { return nil }
        let field: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = line
            value = ""
        }
        switch field {
        case "event":
            eventType = String(value)
        case "data":
            let length = dataLength + (hasData ? 1 : 0) + value.utf8.count
            guard length <= maximumDataLength else { throw EventTooLong(length: length) }
            if hasData { data += "\n" }
            data += value
            dataLength = length
            hasData = true
        case "id":
            if !value.contains("\u{0}") { lastEventID = String(value) }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ (48...57).contains($0) }), let milliseconds = Int(value) {
                retry = milliseconds
                reconnectionTime = milliseconds
            }
        default:
            break
        }
        return nil
    }

    /// An empty line: the event gathered since the last one, if it has data. (At the end of
    /// the body an event without its empty line is dropped, as `EventSource` does: nobody
    /// calls this then.)
    private mutating func dispatchEvent() -> ServerSentEvent? {
        defer {
            data = ""
            dataLength = 0
            hasData = false
            eventType = ""
            retry = nil
        }
        dispatchedLastEventID = lastEventID
        guard hasData else { return nil }
        return ServerSentEvent(event: eventType.isEmpty ? "message" : eventType, data: data, id: lastEventID, retry: retry)
    }
}
