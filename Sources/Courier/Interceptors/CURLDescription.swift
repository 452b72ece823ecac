#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// Builds a `curl` command line that sends the same request (Alamofire's `cURLDescription`):
/// method, URL, headers and body, every argument single-quoted for a POSIX shell. Pure.
enum CURLCommand {
    /// The command for `method` `url` with `headers` (in order) and `body`.
    ///
    /// - GET is implied; HEAD is `--head`; any other method is `-X METHOD`.
    /// - A URL with `[]{}` gets `--globoff` (curl would expand them).
    /// - A body is sent byte for byte: as a quoted `--data-raw` argument when it is UTF-8 text
    ///   without NUL (`--data-raw`, unlike `--data-binary`, never reads a file for a body that
    ///   starts with `@`), else piped in from `printf` with octal escapes
    ///   (`printf '\001…' | curl … --data-binary @-`). With a body and no `Content-Type`,
    ///   `-H 'Content-Type:'` stops curl adding its form type.
    /// - `streamedBody`: the body is a stream, not shown (a `# …` note says so).
    static func command(method: String, url: String, headers: [(String, String)], body: Data?, streamedBody: Bool = false) -> String {
        var arguments = ["curl"]
        let upper = method.uppercased()
        if url.contains(where: { "[]{}".contains($0) }) { arguments.append("--globoff") }
        if upper == "HEAD" {
            arguments.append("--head")
        } else if upper != "GET" || (body != nil && upper == "GET") {
            arguments += ["-X", quote(method)]
        }
        arguments.append(quote(url))
        for (name, value) in headers {
            arguments += ["-H", quote(value.isEmpty ? "\(name);" : "\(name): \(value)")]
        }
        var prefix = ""
        if let body {
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) { arguments += ["-H", quote("Content-Type:")] }
            if let text = String(data: body, encoding: .utf8), !text.contains("\0") {
                arguments += ["--data-raw", quote(text)]
            } else {
                prefix = "printf '\(octalEscaped(body))' | "
                arguments += ["--data-binary", "@-"]
            }
        }
        var line = prefix + arguments.joined(separator: " ")
        if streamedBody { line += " # the body is a stream: not shown" }
        return line
    }

    /// `text` in single quotes for a POSIX shell (`'` becomes `'\''`).
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Every byte as a `printf` octal escape (`\ooo`): safe inside single quotes.
    static func octalEscaped(_ data: Data) -> String {
        var out = ""
        out.reserveCapacity(data.count * 4)
        for byte in data {
            let octal = String(byte, radix: 8)
            out += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
        }
        return out
    }
}

extension URLRequest {
    /// A `curl` command that sends this request: method, URL, headers (sorted by name, as
    /// `allHTTPHeaderFields` has no order) and body, shell-quoted safely for `sh`/`bash`. A
    /// body stream is noted, not shown. "$ curl …" is not prefixed; copy it into a shell as is.
    public var cURLDescription: String {
        let headers = (allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }.map { ($0.key, $0.value) }
        return CURLCommand.command(
            method: httpMethod ?? "GET", url: url?.absoluteString ?? "", headers: headers, body: httpBody,
            streamedBody: httpBody == nil && httpBodyStream != nil)
    }
}

extension SessionTask {
    /// A `curl` command that sends the task's current request (the last one sent, after
    /// adaptation and redirects; the original before it starts), with the session's
    /// additional headers and cookies added while the task runs, as the session sends them.
    /// See `URLRequest.cURLDescription`.
    public var cURLDescription: String {
        guard var request = currentRequest ?? originalRequest else { return "curl" }
        if let configuration = delegate?.environment.configuration {
            for (name, value) in configuration.httpAdditionalHeaders where request.value(forHTTPHeaderField: name) == nil {
                request.setValue(value, forHTTPHeaderField: name)
            }
            if let jar = configuration.cookieJar, request.httpShouldHandleCookies, request.value(forHTTPHeaderField: "Cookie") == nil,
                let url = request.url, let cookie = jar.cookieHeader(for: url)
            {
                request.setValue(cookie, forHTTPHeaderField: "Cookie")
            }
        }
        return request.cURLDescription
    }
}
