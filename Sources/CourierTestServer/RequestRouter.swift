import NIOHTTP1

/// Maps a request's path to its endpoint. One router serves every connection of a server;
/// it holds the only per-server endpoint state, the Digest authentication secret.
struct RequestRouter: Sendable {
    let digest = DigestAuthentication()
    /// `/retry/{key}` arrivals (see ``RetryEndpoints``).
    let retries = RetryEndpoints()
    /// `/sse/{key}` event streams and their request logs (see ``EventStreamEndpoints``).
    let eventStreams = EventStreamEndpoints()

    /// Whether the request's body is streamed through a hash instead of buffered (`/upload`).
    func streamsBody(_ head: HTTPRequestHead) -> Bool {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return path == "/upload" || (path.hasSuffix("/upload") && path.contains("://") && path.filter { $0 == "/" }.count == 3)
    }

    /// The reply to a complete request.
    func reply(to request: ServerRequest) -> ServerReply {
        let segments = request.pathSegments
        switch segments.first {
        case nil: return Self.index
        case "fault": return self.fault(request, Array(segments.dropFirst()))
        case "ws": return WebSocketEndpoint.reply(to: request, Array(segments.dropFirst()))
        default: return self.httpbin(request, segments)
        }
    }

    private func httpbin(_ request: ServerRequest, _ path: [String]) -> ServerReply {
        switch (path[0], path.count) {
        // Request inspection and echo
        case ("get", 1): HTTPBinEndpoints.methodEcho(request, expected: .GET)
        case ("post", 1): HTTPBinEndpoints.methodEcho(request, expected: .POST)
        case ("put", 1): HTTPBinEndpoints.methodEcho(request, expected: .PUT)
        case ("patch", 1): HTTPBinEndpoints.methodEcho(request, expected: .PATCH)
        case ("delete", 1): HTTPBinEndpoints.methodEcho(request, expected: .DELETE)
        case ("anything", _): HTTPBinEndpoints.anything(request)
        case ("headers", 1): HTTPBinEndpoints.headers(request)
        case ("ip", 1): HTTPBinEndpoints.ip(request)
        case ("user-agent", 1): HTTPBinEndpoints.userAgent(request)
        case ("uuid", 1): HTTPBinEndpoints.uuid(request)
        // Status codes and headers
        case ("status", 2): StatusEndpoints.status(request, codes: path[1])
        case ("response-headers", 1): StatusEndpoints.responseHeaders(request)
        // Generated data
        case ("bytes", 2): DynamicDataEndpoints.bytes(request, count: path[1])
        case ("stream-bytes", 2): DynamicDataEndpoints.streamBytes(request, count: path[1])
        case ("stream", 2): DynamicDataEndpoints.stream(request, count: path[1])
        case ("download", 2): DynamicDataEndpoints.download(request, count: path[1])
        case ("range", 2): RangeRequests.range(request, size: path[1])
        case ("drip", 1): DynamicDataEndpoints.drip(request)
        case ("delay", 2): DynamicDataEndpoints.delay(request, seconds: path[1])
        // Redirects
        case ("redirect", 2): RedirectEndpoints.redirect(request, count: path[1])
        case ("relative-redirect", 2): RedirectEndpoints.relativeRedirect(request, count: path[1])
        case ("absolute-redirect", 2): RedirectEndpoints.absoluteRedirect(request, count: path[1])
        case ("redirect-to", 1): RedirectEndpoints.redirectTo(request)
        // Authentication
        case ("basic-auth", 3): AuthEndpoints.basic(request, user: path[1], password: path[2])
        case ("hidden-basic-auth", 3): AuthEndpoints.hiddenBasic(request, user: path[1], password: path[2])
        case ("bearer", 1): AuthEndpoints.bearer(request)
        case ("bearer", 2): RetryEndpoints.bearer(request, token: path[1])
        // Retries (RetryEndpoints)
        case ("retry", 2): self.retries.retry(request, key: path[1])
        // Server-sent events (EventStreamEndpoints)
        case ("sse", 2): self.eventStreams.stream(request, key: path[1])
        case ("sse", 3) where path[2] == "log": self.eventStreams.log(key: path[1])
        case ("digest-auth", 4...6):
            AuthEndpoints.digest(
                request,
                digest: self.digest,
                qop: path[1],
                user: path[2],
                password: path[3],
                algorithm: path.count > 4 ? path[4] : nil
            )
        // Cookies
        case ("cookies", 1): CookieEndpoints.cookies(request)
        case ("cookies", 2) where path[1] == "set": CookieEndpoints.set(request.query)
        case ("cookies", 4) where path[1] == "set": CookieEndpoints.set([(path[2], path[3])])
        case ("cookies", 2) where path[1] == "delete": CookieEndpoints.delete(request)
        // Caching
        case ("cache", 1): CacheEndpoints.cache(request)
        case ("cache", 2): CacheEndpoints.cacheControl(request, seconds: path[1])
        case ("etag", 2): CacheEndpoints.etag(request, tag: path[1])
        case ("cached", 2...): CacheEndpoints.configurable(request)
        // Response formats
        case ("json", 1): ResponseFormatEndpoints.json()
        case ("xml", 1): ResponseFormatEndpoints.xml()
        case ("html", 1): ResponseFormatEndpoints.html()
        case ("encoding", 2) where path[1] == "utf8": ResponseFormatEndpoints.utf8()
        case ("gzip", 1): ResponseFormatEndpoints.gzip(request)
        case ("deflate", 1): ResponseFormatEndpoints.deflate(request)
        case ("image", 1): ResponseFormatEndpoints.image(request)
        case ("image", 2): SampleImages.Format(rawValue: path[1]).map(ResponseFormatEndpoints.image) ?? .notFound
        case ("base64", 2): ResponseFormatEndpoints.base64(path[1])
        case ("robots.txt", 1): ResponseFormatEndpoints.robots()
        case ("deny", 1): ResponseFormatEndpoints.deny()
        default: .notFound
        }
    }

    private func fault(_ request: ServerRequest, _ path: [String]) -> ServerReply {
        switch (path.first ?? "", path.count) {
        case ("short-body", 1): FaultEndpoints.shortBody(request)
        case ("reset-mid-body", 1): FaultEndpoints.resetMidBody(request)
        case ("incomplete-headers", 1): FaultEndpoints.incompleteHeaders()
        case ("stall-body", 2): FaultEndpoints.stallBody(count: path[1])
        case ("bad-chunked", 1): FaultEndpoints.badChunked()
        case ("close-delimited", 1): FaultEndpoints.closeDelimited(request)
        case ("huge-headers", 1): FaultEndpoints.hugeHeaders(request)
        case ("continue", 1): FaultEndpoints.continue(request)
        case ("redirect-loop", 1): FaultEndpoints.redirectLoop()
        case ("no-response", 1): FaultEndpoints.noResponse()
        default: .notFound
        }
    }

    private static var index: ServerReply {
        .text(
            """
            Courier test server: an httpbin-compatible HTTP/1.1 server with fault endpoints.
            See Sources/CourierTestServer/README.md for the endpoints.

            """
        )
    }
}
