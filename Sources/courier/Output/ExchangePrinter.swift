import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Renders a request and its response the way HTTPie does: heads as HTTP/1.1 text, bodies as
/// formatted (and coloured) JSON when asked, raw otherwise; binary bodies never reach a
/// terminal. Pure: returns bytes, the caller writes them.
struct ExchangePrinter {
    var options: PrintOptions

    static let binaryNote = """
        +-----------------------------------------+
        | NOTE: binary data not shown in terminal |
        +-----------------------------------------+
        """

    // MARK: - Heads

    /// `GET /path?query HTTP/1.1`, `Host`, then the request's headers sorted by name.
    func requestHead(_ request: URLRequest, bodyLength: Int64?) -> String {
        guard let url = request.url else { return "" }
        // The target and Host the engine sends (RequestTarget), not rebuilt from Foundation's
        // accessors: `url.path` decodes escapes (a redirect's Location, printed with --all, could
        // put the server's terminal controls or a line break in the line), `url.port` keeps a
        // default port the engine drops, `url.host` decodes the host.
        let sent = try? RequestTarget(url: url)
        var lines = [paint(request.httpMethod ?? "GET", Bold.code) + " " + (sent?.target ?? "/") + " HTTP/1.1"]
        var headers = request.allHTTPHeaderFields ?? [:]
        if let sent, !headers.keys.contains(where: { $0.caseInsensitiveCompare("Host") == .orderedSame }) {
            lines.append(headerLine("Host", sent.hostHeader))
        }
        if let bodyLength, bodyLength > 0,
            !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Length") == .orderedSame })
        {
            headers["Content-Length"] = String(bodyLength)
        }
        for name in headers.keys.sorted(by: { $0.lowercased() < $1.lowercased() }) {
            lines.append(headerLine(name, headers[name] ?? ""))
        }
        return lines.joined(separator: "\n") + "\n\n"
    }

    /// The status line as the server sent it (`HTTP/1.0 200 OK`), then the fields in arrival
    /// order, repeated ones repeated.
    func responseHead(_ head: ResponseHead) -> String {
        let status = "\(head.statusCode) \(head.reasonPhrase)"
        var lines = [head.version + " " + paint(status, Self.statusColor(head.statusCode))]
        for (name, value) in head.fields {
            lines.append(headerLine(name, value))
        }
        return lines.joined(separator: "\n") + "\n\n"
    }

    // MARK: - Bodies

    /// The bytes to print for a body: formatted JSON, text as is, or the binary note on a
    /// terminal (raw bytes when piped). Formatted and noted bodies end with a newline.
    func body(_ data: Data) -> Data {
        guard !data.isEmpty else { return Data() }
        if Self.isBinary(data) {
            return options.isTerminal ? Data((Self.binaryNote + "\n").utf8) : data
        }
        if options.format || options.colors,
            let formatted = JSONFormatter.format(data, indent: options.format ? 4 : 0, colors: options.colors)
        {
            let text = options.format ? formatted : formatted.replacingOccurrences(of: "\n", with: "")
            return Data((text + "\n").utf8)
        }
        if options.colors, let text = String(data: data, encoding: .utf8), MarkupFormatter.looksLikeMarkup(text) {
            let colored = MarkupFormatter.colorize(text)
            return Data((colored.hasSuffix("\n") ? colored : colored + "\n").utf8)
        }
        if options.isTerminal, data.last != UInt8(ascii: "\n") {
            return data + Data("\n".utf8)
        }
        return data
    }

    /// Text is UTF-8 without NUL bytes; anything else is binary.
    static func isBinary(_ data: Data) -> Bool {
        data.contains(0) || String(data: data, encoding: .utf8) == nil
    }

    // MARK: - Colours

    private enum Bold {
        static let code = "\u{1B}[1m"
    }

    /// `Name: value`, control characters but tab escaped: a server's C1 controls (CSI U+009B,
    /// OSC U+009D: obs-text to HTTP, commands to xterm and VTE) never reach the terminal.
    private func headerLine(_ name: String, _ value: String) -> String {
        paint(MessageSanitizer.escapingControlCharacters(name), "\u{1B}[36m") + ": "
            + MessageSanitizer.escapingControlCharacters(value, keepingTabs: true)
    }

    private func paint(_ text: String, _ color: String) -> String {
        options.colors ? color + text + JSONFormatter.Style.reset : text
    }

    private static func statusColor(_ code: Int) -> String {
        switch code {
        case 200..<300: return "\u{1B}[32m"
        case 300..<400: return "\u{1B}[33m"
        default: return "\u{1B}[31m"
        }
    }

    /// The standard reason phrase (Foundation on Linux has only lower-case descriptions).
    static func reasonPhrase(_ code: Int) -> String {
        let phrases: [Int: String] = [
            100: "Continue", 101: "Switching Protocols", 200: "OK", 201: "Created", 202: "Accepted",
            203: "Non-Authoritative Information", 204: "No Content", 205: "Reset Content", 206: "Partial Content",
            300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
            305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request",
            401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required",
            408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required",
            412: "Precondition Failed", 413: "Content Too Large", 414: "URI Too Long",
            415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
            418: "I'm a teapot", 422: "Unprocessable Content", 429: "Too Many Requests",
            500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout", 505: "HTTP Version Not Supported",
        ]
        return phrases[code] ?? HTTPURLResponse.localizedString(forStatusCode: code).capitalized
    }
}
