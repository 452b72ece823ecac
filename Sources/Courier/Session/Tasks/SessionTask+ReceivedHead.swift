public import HTTPTypes
import NIOHTTP1

extension SessionTask {
    /// The final response's head as swift-http-types' `HTTPResponse`: every field in arrival
    /// order, repeated fields kept separate, names as the server spelled them (unlike
    /// ``response``, whose `HTTPURLResponse` joins repeated fields and forgets the order). Nil
    /// until the head arrived. The reason phrase is the server's own over HTTP/1 (the standard
    /// one for the code when the server's was empty, not plain visible ASCII, or not readable at
    /// the start of a read); HTTP/2 has none, so it is the standard one there.
    public var receivedResponse: HTTPResponse? {
        let (head, url) = snapshot.withLock { ($0.head, $0.responseURL) }
        guard let head else { return nil }
        return try? ResponseHeadBridge.httpResponse(head, url: url)
    }

    /// The HTTP version of the final response as the server spoke it: `HTTP/1.1` or `HTTP/1.0`
    /// from an HTTP/1 status line, `HTTP/2` for HTTP/2; nil until the head arrived.
    public var receivedHTTPVersion: String? {
        snapshot.withLock { state in state.head.map(\.version.spelled) }
    }
}

extension HTTPVersion {
    /// `HTTP/1.1`, `HTTP/1.0`, or `HTTP/2` (no minor version from HTTP/2 on).
    var spelled: String {
        major >= 2 && minor == 0 ? "HTTP/\(major)" : "HTTP/\(major).\(minor)"
    }
}
