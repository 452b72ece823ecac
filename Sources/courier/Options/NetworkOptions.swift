import ArgumentParser
import Courier

/// HTTPie's "Network" options: where the request goes, how long it may take, redirects,
/// proxies, the HTTP version and the cache; curl's `--unix-socket`, `--resolve` and
/// `--connect-to`.
struct NetworkOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Fail when no byte moves for this many seconds (more than 10⁹: no limit).", valueName: "seconds"))
    var timeout: Double?

    @Option(
        name: .customLong("max-time"), parsing: .unconditional,
        help: ArgumentHelp("Fail when the whole exchange takes longer than this many seconds.", valueName: "seconds"))
    var maxTime: Double?

    @Option(
        name: .customLong("wait-for-network"), parsing: .unconditional,
        help: ArgumentHelp(
            "When a request fails because the network is unreachable (no route to the server), wait up to this many seconds for a route, then send it again once (GET, HEAD, OPTIONS, PUT, DELETE and TRACE only).",
            valueName: "seconds"))
    var waitForNetwork: Double?

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

    @Option(
        name: .customLong("unix-socket"),
        help: ArgumentHelp(
            "Connect to this Unix domain socket instead of the network, for every request of the call (as curl's --unix-socket): the URL's host still goes in the Host header and, for https, is the name the certificate must hold. http+unix://%2Fpath%2Fto.sock/PATH URLs need no option.",
            valueName: "path"))
    var unixSocket: String?

    @Option(
        name: .customLong("resolve"),
        help: ArgumentHelp(
            "Use these addresses for HOST:PORT instead of DNS (as curl's --resolve; repeatable). TLS still checks HOST.",
            valueName: "host:port:addr[,addr]"))
    var resolve: [String] = []

    @Option(
        name: .customLong("connect-to"),
        help: ArgumentHelp(
            "Connect to HOST2:PORT2 for requests to HOST1:PORT1 (as curl's --connect-to; repeatable; an empty HOST1 or PORT1 matches any, an empty HOST2 or PORT2 keeps the request's). TLS still checks HOST1.",
            valueName: "host1:port1:host2:port2"))
    var connectTo: [String] = []

    @Option(help: ArgumentHelp(
        "Use an HTTP cache on disk in this folder (RFC 9111: fresh responses are answered without a request, stale ones revalidated; 256 MiB).",
        valueName: "dir"))
    var cache: String?

    @Option(name: .customLong("default-scheme"), help: ArgumentHelp("The scheme of a URL given without one: http or https.", valueName: "scheme"))
    var defaultScheme: String?

    @Flag(help: "Short for --default-scheme https (what courier-https does).")
    var https = false

    /// What `--unix-socket`, `--resolve` and `--connect-to` set in a session's configuration.
    struct ConnectionTargets {
        var unixSocketPaths: [String: String] = [:]
        var resolveOverrides: [ResolveOverride] = []
        var connectToOverrides: [ConnectToOverride] = []
    }

    /// `--unix-socket`, `--resolve` and `--connect-to`, checked.
    /// - Throws: ``RequestBuildError`` naming the option and what is wrong with its value.
    func connectionTargets() throws -> ConnectionTargets {
        var targets = ConnectionTargets()
        if let unixSocket {
            guard !unixSocket.isEmpty else { throw RequestBuildError(description: "--unix-socket needs a path") }
            targets.unixSocketPaths = ["*": unixSocket]
        }
        do {
            targets.resolveOverrides = try resolve.map { try ResolveOverride(parsing: $0) }
        } catch {
            throw RequestBuildError(description: "--resolve \(error)")
        }
        do {
            targets.connectToOverrides = try connectTo.map { try ConnectToOverride(parsing: $0) }
        } catch {
            throw RequestBuildError(description: "--connect-to \(error)")
        }
        return targets
    }

    /// The curl options that send a request where these options send it (for `--curl`): each
    /// flag with its value.
    var curlConnectionArguments: [(flag: String, value: String)] {
        (unixSocket.map { [("--unix-socket", $0)] } ?? []) + resolve.map { ("--resolve", $0) } + connectTo.map { ("--connect-to", $0) }
    }

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
