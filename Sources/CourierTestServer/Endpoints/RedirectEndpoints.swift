/// httpbin's redirect endpoints.
enum RedirectEndpoints {
    /// `/redirect/{n}`: 302 `n` times, then `/get`; relative unless `?absolute=true`.
    static func redirect(_ request: ServerRequest, count: String) -> ServerReply {
        guard let count = Int(count), count > 0 else { return .notFound }
        let absolute = request.queryValue("absolute")?.lowercased() == "true"
        if count == 1 {
            return .redirect(to: absolute ? "\(request.scheme)://\(request.authority)/get" : "/get")
        }
        return absolute ? absoluteRedirect(request, count: count) : relativeRedirect(count: count)
    }

    /// `/relative-redirect/{n}`: 302 to `/relative-redirect/{n-1}`, and from 1 to `/get`.
    static func relativeRedirect(_ request: ServerRequest, count: String) -> ServerReply {
        guard let count = Int(count), count > 0 else { return .notFound }
        return relativeRedirect(count: count)
    }

    /// `/absolute-redirect/{n}`: like `/relative-redirect/{n}` with absolute URLs.
    static func absoluteRedirect(_ request: ServerRequest, count: String) -> ServerReply {
        guard let count = Int(count), count > 0 else { return .notFound }
        return absoluteRedirect(request, count: count)
    }

    /// `/redirect-to?url=&status_code=` (any method): redirects to `url` with `status_code`
    /// when it is a 3xx, else 302.
    static func redirectTo(_ request: ServerRequest) -> ServerReply {
        guard let url = request.queryValue("url") else {
            return .text("Missing url parameter\n", status: .badRequest)
        }
        var status = 302
        if let code = request.queryValue("status_code").flatMap({ Int($0) }), (300..<400).contains(code) {
            status = code
        }
        return .redirect(to: url, status: .init(statusCode: status))
    }

    private static func relativeRedirect(count: Int) -> ServerReply {
        .redirect(to: count == 1 ? "/get" : "/relative-redirect/\(count - 1)")
    }

    private static func absoluteRedirect(_ request: ServerRequest, count: Int) -> ServerReply {
        let base = "\(request.scheme)://\(request.authority)"
        return .redirect(to: count == 1 ? "\(base)/get" : "\(base)/absolute-redirect/\(count - 1)")
    }
}
