import CourierEngine
public import Foundation
import Synchronization

/// Records a session's exchanges as an HTTP Archive (HAR 1.2): attach it as an event monitor,
/// run requests, then write ``archive()`` or ``write(to:)``. Each exchange is an entry (a
/// redirect, an answer to a challenge and a retry are entries of their own), with its request
/// and response heads, sizes and timings from the exchange's metrics.
///
/// Header values and query parameters that ``ObservabilityRedaction`` calls sensitive
/// (`Authorization`, `Cookie`, `Set-Cookie`, tokens and keys in the query) are written as
/// `REDACTED`, unless the recorder is made with `redaction: nil`. Bodies are not kept (their
/// sizes and types are).
///
/// ```swift
/// let har = HARRecorder()
/// let manager = HTTPSessionManager(baseURL: server.baseURL)
/// manager.addEventMonitor(har)
/// _ = try await manager.data(for: URLRequest(url: server.baseURL.appending(path: "redirect/2")))
/// try har.write(to: URL(fileURLWithPath: "/tmp/session.har"))   // 3 entries
/// ```
public final class HARRecorder: SessionEventMonitor {
    private let redaction: ObservabilityRedaction?
    /// The most entries kept: past it, the oldest go (see ``droppedEntries``).
    public let maximumEntries: Int
    private let entries = Mutex<(kept: [HARArchive.Entry], dropped: Int)>(([], 0))

    /// A recorder that hides what `redaction` calls sensitive (nil: hides nothing) and keeps
    /// at most the newest `maximumEntries` exchanges (10,000 by default: a recorder left on a long-lived
    /// session must not grow without end).
    public init(redaction: ObservabilityRedaction? = .default, maximumEntries: Int = 10_000) {
        self.redaction = redaction
        self.maximumEntries = max(1, maximumEntries)
    }

    /// How many of the oldest entries were dropped to stay within ``maximumEntries``.
    public var droppedEntries: Int { entries.withLock { $0.dropped } }

    /// Receives each exchange as it ends.
    public func task(_ task: SessionTask, didFinishExchange exchange: TaskExchange) {
        let entry = Self.entry(for: exchange, redaction: redaction)
        let limit = maximumEntries
        entries.withLock { entries in
            entries.kept.append(entry)
            if entries.kept.count > limit {
                // Amortized: drop a tenth at once rather than shift the array per exchange.
                let drop = min(entries.kept.count - limit + limit / 10, entries.kept.count - 1)
                entries.kept.removeFirst(drop)
                entries.dropped += drop
            }
        }
    }

    /// The entries recorded so far, in the order they started.
    public func archive() -> HARArchive {
        let recorded = entries.withLock { $0.kept }
        return HARArchive(entries: recorded.sorted { $0.startedDateTime < $1.startedDateTime })
    }

    /// The archive as JSON (pretty-printed, keys sorted).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(archive())
    }

    /// Writes the archive to `url`, replacing the file atomically.
    public func write(to url: URL) throws {
        try jsonData().write(to: url, options: .atomic)
    }

    /// Forgets the entries recorded so far.
    public func removeAll() {
        entries.withLock { $0 = ([], 0) }
    }

    // MARK: - Building entries

    /// The HAR entry of `exchange`.
    static func entry(for exchange: TaskExchange, redaction: ObservabilityRedaction?) -> HARArchive.Entry {
        let metrics = exchange.metrics
        let version = exchange.httpVersion ?? (metrics.networkProtocolName == "h2" ? "HTTP/2" : "HTTP/1.1")
        var requestHeaders = exchange.requestHeaders
        if !requestHeaders.contains(where: { $0.name.lowercased() == "host" }), let host = exchange.url.host {
            let port = exchange.url.port.map { ":\($0)" } ?? ""
            requestHeaders.insert(TaskExchange.Header(name: "Host", value: host + port), at: 0)
        }
        let requestContentType = requestHeaders.first { $0.name.lowercased() == "content-type" }?.value
        let request = HARArchive.Request(
            method: exchange.method,
            url: redaction?.redactedURL(exchange.url) ?? exchange.url.absoluteString,
            httpVersion: version,
            cookies: cookies(in: requestHeaders, field: "cookie", redaction: redaction),
            headers: requestHeaders.map { pair($0, redaction) },
            queryString: queryItems(of: exchange.url, redaction: redaction),
            postData: metrics.requestBodyBytesSent > 0 || requestContentType != nil
                ? HARArchive.PostData(mimeType: requestContentType ?? "application/octet-stream", text: "") : nil,
            headersSize: metrics.requestHeaderBytesSent > 0 ? Int(metrics.requestHeaderBytesSent) : -1,
            bodySize: Int(metrics.requestBodyBytesSent))
        let responseHeaders = exchange.responseHeaders
        let response = HARArchive.Response(
            status: exchange.statusCode ?? 0,
            statusText: exchange.reasonPhrase ?? "",
            httpVersion: exchange.statusCode == nil ? "" : version,
            cookies: cookies(in: responseHeaders, field: "set-cookie", redaction: redaction),
            headers: responseHeaders.map { pair($0, redaction) },
            content: HARArchive.Content(
                size: Int(metrics.responseBodyBytesReceived),
                mimeType: responseHeaders.first { $0.name.lowercased() == "content-type" }?.value ?? ""),
            redirectURL: responseHeaders.first { $0.name.lowercased() == "location" }?.value ?? "",
            headersSize: exchange.statusCode != nil && metrics.responseHeaderBytesReceived > 0
                ? Int(metrics.responseHeaderBytesReceived) : -1,
            bodySize: exchange.statusCode == nil ? -1 : Int(metrics.responseBodyBytesReceived))
        let timings = timings(of: metrics)
        let total = [timings.blocked, timings.dns, timings.connect, timings.send, timings.wait, timings.receive]
            .filter { $0 > 0 }.reduce(0, +)
        return HARArchive.Entry(
            startedDateTime: iso8601(metrics.fetchStart), time: rounded(total), request: request, response: response,
            cache: HARArchive.Cache(), timings: timings, serverIPAddress: metrics.remoteAddress,
            connection: metrics.localPort.map(String.init),
            _error: exchange.error.map { "\($0)" })
    }

    /// HAR timings from an exchange's metrics (milliseconds; -1 for a phase that did not
    /// happen, as HAR wants for `blocked`, `dns`, `connect` and `ssl`).
    static func timings(of metrics: EngineMetrics) -> HARArchive.Timings {
        func span(_ start: Date?, _ end: Date?) -> Double? {
            guard let start, let end else { return nil }
            return max(0, end.timeIntervalSince(start) * 1000)
        }
        let dns = metrics.isReusedConnection ? nil : span(metrics.domainLookupStart, metrics.domainLookupEnd)
        let connect = metrics.isReusedConnection ? nil : span(metrics.connectStart, metrics.connectEnd)
        let ssl = metrics.isReusedConnection ? nil : span(metrics.secureConnectionStart, metrics.secureConnectionEnd)
        let waitedForConnection = span(metrics.fetchStart, metrics.requestStart)
        let blocked = waitedForConnection.map { max(0, $0 - (dns ?? 0) - (connect ?? 0)) }
        let send = span(metrics.requestStart, metrics.requestEnd ?? metrics.requestStart) ?? 0
        let wait = span(metrics.requestEnd ?? metrics.requestStart, metrics.responseStart) ?? 0
        let receive = span(metrics.responseStart, metrics.responseEnd) ?? 0
        return HARArchive.Timings(
            blocked: blocked.map(rounded) ?? -1, dns: dns.map(rounded) ?? -1, connect: connect.map(rounded) ?? -1,
            send: rounded(send), wait: rounded(wait), receive: rounded(receive), ssl: ssl.map(rounded) ?? -1)
    }

    private static func rounded(_ milliseconds: Double) -> Double {
        (milliseconds * 1000).rounded() / 1000
    }

    private static func pair(_ header: TaskExchange.Header, _ redaction: ObservabilityRedaction?) -> HARArchive.NameValue {
        HARArchive.NameValue(
            name: header.name, value: redaction?.redactedHeaderValue(name: header.name, value: header.value) ?? header.value)
    }

    /// The cookies of every `field` header (`cookie`: `a=1; b=2`; `set-cookie`: one each).
    private static func cookies(
        in headers: [TaskExchange.Header], field: String, redaction: ObservabilityRedaction?
    ) -> [HARArchive.NameValue] {
        let hidden = redaction?.isSensitiveHeader(field) ?? false
        var cookies: [HARArchive.NameValue] = []
        for header in headers where header.name.lowercased() == field {
            let pairs = field == "cookie" ? header.value.split(separator: ";") : [header.value.split(separator: ";").first ?? ""]
            for pair in pairs {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard let name = parts.first?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { continue }
                let value = parts.count > 1 ? String(parts[1]).trimmingCharacters(in: .whitespaces) : ""
                cookies.append(HARArchive.NameValue(name: name, value: hidden ? ObservabilityRedaction.placeholder : value))
            }
        }
        return cookies
    }

    private static func queryItems(of url: URL, redaction: ObservabilityRedaction?) -> [HARArchive.NameValue] {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return items.map { item in
            let hidden = redaction?.isSensitiveQueryParameter(item.name) ?? false
            return HARArchive.NameValue(name: item.name, value: hidden ? ObservabilityRedaction.placeholder : item.value ?? "")
        }
    }

    /// `2026-12-07T15:34:16.123Z`.
    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
