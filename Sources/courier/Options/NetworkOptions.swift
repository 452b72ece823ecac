import ArgumentParser

/// HTTPie's "Network" options: where the request goes, how long it may take, redirects,
/// proxies, the HTTP version and the cache.
struct NetworkOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Fail when no byte moves for this many seconds (more than 10⁹: no limit).", valueName: "seconds"))
    var timeout: Double?

    @Option(
        name: .customLong("max-time"), parsing: .unconditional,
        help: ArgumentHelp("Fail when the whole exchange takes longer than this many seconds.", valueName: "seconds"))
    var maxTime: Double?

    @Flag(name: [.customShort("F"), .long], help: "Follow redirects (off by default, as in HTTPie).")
    var follow = false

    @Option(name: .customLong("max-redirects"), help: "With --follow: the most redirects before exit status 6.")
    var maxRedirects: Int = 30

    @Flag(name: .customLong("check-status"), help: "Exit with 3, 4 or 5 for a 3xx, 4xx or 5xx response.")
    var checkStatus = false

    @Flag(name: .customLong("http1.1"), help: "Speak HTTP/1.1 only (HTTP/2 is used over TLS when the server offers it).")
    var http11 = false

    @Option(
        help: ArgumentHelp(
            "Send every request through this proxy: http://, socks5:// (names resolved here) or socks5h:// (names resolved by the proxy), with [user:password@]host[:port] (port 1080 when none, as in curl). Without it, http_proxy, https_proxy, all_proxy and no_proxy apply as in curl (socks5:// and socks5h:// too; upper-case HTTP_PROXY is ignored).",
            valueName: "url"))
    var proxy: String?

    @Option(help: ArgumentHelp(
        "Use an HTTP cache on disk in this folder (RFC 9111: fresh responses are answered without a request, stale ones revalidated; 256 MiB).",
        valueName: "dir"))
    var cache: String?

    @Option(name: .customLong("default-scheme"), help: ArgumentHelp("The scheme of a URL given without one: http or https.", valueName: "scheme"))
    var defaultScheme: String?

    @Flag(help: "Short for --default-scheme https (what courier-https does).")
    var https = false

    /// The scheme for URLs typed without one.
    /// - Throws: ``RequestBuildError`` for anything but http or https.
    func scheme() throws -> String {
        if let defaultScheme {
            let scheme = defaultScheme.lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw RequestBuildError(description: "--default-scheme takes http or https; got '\(defaultScheme)'")
            }
            return scheme
        }
        return https ? "https" : "http"
    }
}
