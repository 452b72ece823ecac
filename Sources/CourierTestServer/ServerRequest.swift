import NIOCore
import NIOHTTP1

/// One complete request as the endpoints see it: the head, the buffered body, and where it
/// came from. Built by `HTTPConnectionHandler` when the request's `.end` arrives.
struct ServerRequest {
    /// The request head as NIO decoded it.
    var head: HTTPRequestHead
    /// The whole body (empty when there was none).
    var body: ByteBuffer
    /// The client's IP address, e.g. `127.0.0.1` or `::1` (httpbin's `origin`).
    var clientAddress: String
    /// `http` or `https`.
    var scheme: String
    /// `host:port` of the listening socket, used when the request has no `Host` header.
    var serverAuthority: String

    var method: HTTPMethod { head.method }
    var headers: HTTPHeaders { head.headers }

    /// The request target in origin form (`/path?query`): an absolute-form target
    /// (`http://host/path`, as sent to proxies) loses its scheme and authority.
    var target: String {
        let uri = head.uri
        guard !uri.hasPrefix("/"), let schemeEnd = uri.range(of: "://") else { return uri }
        let afterAuthority = uri[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" }
        guard let afterAuthority else { return "/" }
        let rest = String(uri[afterAuthority...])
        return rest.hasPrefix("/") ? rest : "/" + rest
    }

    /// The request target's path, still percent-encoded.
    var rawPath: String {
        let target = self.target
        if let question = target.firstIndex(of: "?") {
            return String(target[..<question])
        }
        return target
    }

    /// The path split on `/` with each segment percent-decoded; `/a/b%20c` gives `["a", "b c"]`.
    var pathSegments: [String] {
        rawPath.split(separator: "/", omittingEmptySubsequences: true).map {
            PercentDecoding.decode(String($0), plusAsSpace: false)
        }
    }

    /// The query parameters in order, decoded like a form (`+` is a space).
    var query: [(name: String, value: String)] {
        let target = self.target
        guard let question = target.firstIndex(of: "?") else { return [] }
        return PercentDecoding.formPairs(String(target[target.index(after: question)...]))
    }

    /// The first value of query parameter `name`.
    func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The `Host` header, or the listening address when the client sent none.
    var authority: String {
        headers.first(name: "host") ?? serverAuthority
    }

    /// The full URL of the request as httpbin reports it in `url`.
    var url: String {
        "\(scheme)://\(authority)\(target)"
    }

    /// The body's bytes.
    var bodyBytes: [UInt8] {
        Array(body.readableBytesView)
    }

    /// The media type of the body without parameters, lowercased (`multipart/form-data`).
    var mediaType: String? {
        guard let value = headers.first(name: "content-type") else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingASCIIWhitespace().lowercased()
    }

    /// Request headers as httpbin reports them: names in Title-Case, repeated headers joined with `,`.
    var headersJSON: JSONNode {
        var result: [String: String] = [:]
        for header in headers {
            let name = Self.titleCased(header.name)
            if let existing = result[name] {
                result[name] = existing + "," + header.value
            } else {
                result[name] = header.value
            }
        }
        return .object(result.mapValues(JSONNode.string))
    }

    /// `content-type` → `Content-Type`, as Werkzeug presents header names.
    static func titleCased(_ name: String) -> String {
        name.split(separator: "-", omittingEmptySubsequences: false).map { word in
            word.prefix(1).uppercased() + word.dropFirst().lowercased()
        }.joined(separator: "-")
    }
}

/// Percent-decoding of paths, query strings and `application/x-www-form-urlencoded` bodies.
enum PercentDecoding {
    /// Decodes `%XX` escapes (and `+` as a space when `plusAsSpace`); invalid escapes are kept
    /// literally and invalid UTF-8 becomes U+FFFD, so no input can make this fail.
    static func decode(_ string: String, plusAsSpace: Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        var iterator = Array(string.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = hexValue(iterator[iterator.startIndex]),
                let low = hexValue(iterator[iterator.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                iterator = iterator.dropFirst(2)
            } else if byte == UInt8(ascii: "+"), plusAsSpace {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Splits `a=1&b=2&a=3` into decoded pairs in order; a name without `=` has an empty value.
    static func formPairs(_ string: String) -> [(name: String, value: String)] {
        string.split(separator: "&", omittingEmptySubsequences: true).map { part in
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(String(pieces[0]), plusAsSpace: true)
            let value = pieces.count > 1 ? decode(String(pieces[1]), plusAsSpace: true) : ""
            return (name, value)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs.
    func trimmingASCIIWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
