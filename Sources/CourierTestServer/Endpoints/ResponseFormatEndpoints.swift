import CompressNIO
import Foundation
import NIOCore
import NIOHTTP1

/// httpbin's response-format endpoints: fixed documents, compressed bodies, images and base64.
enum ResponseFormatEndpoints {
    /// `/json`: httpbin's slideshow.
    static func json() -> ServerReply {
        .json(SampleDocuments.slideshow)
    }

    /// `/xml`: httpbin's slideshow as XML.
    static func xml() -> ServerReply {
        .text(SampleDocuments.xml, contentType: "application/xml")
    }

    /// `/html`: a page of Moby-Dick.
    static func html() -> ServerReply {
        .text(SampleDocuments.html, contentType: "text/html; charset=utf-8")
    }

    /// `/encoding/utf8`: text in many scripts.
    static func utf8() -> ServerReply {
        .text(SampleDocuments.utf8Demo, contentType: "text/html; charset=utf-8")
    }

    /// `/robots.txt`.
    static func robots() -> ServerReply {
        .text("User-agent: *\nDisallow: /deny\n", contentType: "text/plain")
    }

    /// `/deny`: the page robots.txt forbids.
    static func deny() -> ServerReply {
        .text("YOU SHOULDN'T BE HERE\n", contentType: "text/plain")
    }

    /// `/gzip`: `{"gzipped": true, "headers", "method", "origin"}`, gzip-encoded.
    static func gzip(_ request: ServerRequest) -> ServerReply {
        compressed(request, flag: "gzipped", algorithm: .gzip(), encoding: "gzip")
    }

    /// `/deflate`: `{"deflated": true, ...}`, encoded as HTTP's `deflate` (zlib format, RFC 1950).
    static func deflate(_ request: ServerRequest) -> ServerReply {
        compressed(request, flag: "deflated", algorithm: .zlib(), encoding: "deflate")
    }

    private static func compressed(
        _ request: ServerRequest,
        flag: String,
        algorithm: CompressionAlgorithm,
        encoding: String
    ) -> ServerReply {
        var dictionary = HTTPBinEndpoints.dictionary(request, [.origin, .headers, .method])
        dictionary[flag] = true
        var buffer = ByteBuffer(bytes: JSONNode.object(dictionary).encoded)
        guard let compressed = try? buffer.compress(with: algorithm) else {
            return .text("Compression failed\n", status: .internalServerError)
        }
        return .full(
            status: .ok,
            headers: ["Content-Type": "application/json", "Content-Encoding": encoding],
            body: Array(compressed.readableBytesView)
        )
    }

    /// `/image`: the format the `Accept` header asks for (webp, svg, jpeg, png; `image/*`,
    /// `*/*` or no header give png), else 406.
    static func image(_ request: ServerRequest) -> ServerReply {
        guard let accept = request.headers.first(name: "accept")?.lowercased() else {
            return image(.png)
        }
        if accept.contains("image/webp") { return image(.webp) }
        if accept.contains("image/svg+xml") { return image(.svg) }
        if accept.contains("image/jpeg") { return image(.jpeg) }
        if accept.contains("image/png") || accept.contains("image/*") || accept.contains("*/*") { return image(.png) }
        return StatusEndpoints.reply(for: 406)
    }

    /// `/image/{format}`.
    static func image(_ image: SampleImages.Format) -> ServerReply {
        .full(status: .ok, headers: ["Content-Type": image.contentType], body: image.bytes)
    }

    /// `/base64/{value}`: the URL-safe base64 `value` decoded, as text; httpbin's hint when it
    /// is not base64 of UTF-8 text.
    static func base64(_ value: String) -> ServerReply {
        var standard = value.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        guard let data = Data(base64Encoded: standard), let text = String(data: data, encoding: .utf8) else {
            return .text("Incorrect Base64 data try: SFRUUEJJTiBpcyBhd2Vzb21l", contentType: "text/html; charset=utf-8")
        }
        return .text(text, contentType: "text/html; charset=utf-8")
    }
}
