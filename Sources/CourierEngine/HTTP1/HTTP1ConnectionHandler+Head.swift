import NIOCore
import NIOHTTP1

/// The request heads the handler writes, and the sizes its metrics count.
extension HTTP1ConnectionHandler {
    /// The request head for `request`: `Host` first (unless given), the request's fields without
    /// any `Content-Length` or `Transfer-Encoding`, then the body's framing.
    ///
    /// `acceptsCompression` (the pipeline has a decompressor): a request without
    /// `Accept-Encoding` gets `Accept-Encoding: deflate, gzip` last, the field and place
    /// `NIOHTTPResponseDecompressor` would give it. Added here, in the head's own storage, the
    /// decompressor passes the head on as it is; added there, every request's fields were copied
    /// (the head it receives shares them) and grown.
    ///
    /// `proxyAuthorization` (an HTTP proxy's configured credentials, for a request in absolute
    /// form): added as `Proxy-Authorization` unless the request sets that field, after the
    /// framing and before `Accept-Encoding` (the order the decompressor gave them).
    static func makeHead(
        for request: EngineRequest, target: RequestTarget, bodyLength: Int64?, hasBody: Bool, acceptsCompression: Bool = false,
        proxyAuthorization: String? = nil
    ) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + 4)  // Host, a length, Accept-Encoding, a proxy's credentials
        if !request.headers.contains(name: "host") {
            headers.add(name: "Host", value: target.hostHeader)
        }
        for (name, value) in request.headers {
            if name.caseInsensitiveEquals("content-length") || name.caseInsensitiveEquals("transfer-encoding") {
                continue
            }
            headers.add(name: name, value: value)
        }
        if hasBody {
            if let bodyLength {
                headers.add(name: "Content-Length", value: String(bodyLength))
            } else {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            }
        } else if Self.methodsWithBodySemantics.contains(request.method) {
            headers.add(name: "Content-Length", value: "0")
        }
        if let proxyAuthorization, !headers.contains(name: "proxy-authorization") {
            headers.add(name: "Proxy-Authorization", value: proxyAuthorization)
        }
        if acceptsCompression, !headers.contains(name: "accept-encoding") {
            headers.add(name: "Accept-Encoding", value: "deflate, gzip")
        }
        return HTTPRequestHead(
            version: .http1_1,
            method: HTTPMethod(rawValue: request.method),
            uri: target.target,
            headers: headers
        )
    }

    private static let methodsWithBodySemantics: Set<String> = ["POST", "PUT", "PATCH"]

    static func approximateSize(of head: HTTPRequestHead) -> Int64 {
        var size = head.method.rawValue.utf8.count + head.uri.utf8.count + 12
        for (name, value) in head.headers { size += name.utf8.count + value.utf8.count + 4 }
        return Int64(size + 2)
    }

    static func approximateSize(of head: HTTPResponseHead) -> Int64 {
        var size = 13 + head.status.reasonPhrase.utf8.count + 2
        for (name, value) in head.headers { size += name.utf8.count + value.utf8.count + 4 }
        return Int64(size + 2)
    }
}
