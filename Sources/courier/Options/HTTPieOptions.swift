import ArgumentParser

/// The options issue 17 added to `courier [METHOD] URL [ITEM ...]`, with HTTPie 3.2's names and
/// meanings (see the README for where Courier differs).
struct HTTPieOptions: ParsableArguments {
    @Flag(name: [.customShort("I"), .customLong("ignore-stdin")], help: "Never read the body from standard input.")
    var ignoreStdin = false

    @Option(help: ArgumentHelp("Send this text as the body (as if piped to stdin).", valueName: "text"))
    var raw: String?

    @Flag(name: [.customShort("S"), .long], help: "Print the body chunk by chunk as it arrives (JSON lines formatted one by one).")
    var stream = false

    @Flag(help: "Build the request and print it (default --print HB); send nothing.")
    var offline = false

    @Flag(help: "Print the curl command that sends the same request; send nothing.")
    var curl = false

    @Flag(help: "With --follow: print every redirect hop (request and response), not only the last.")
    var all = false

    @Flag(name: [.customShort("h"), .long], help: "Print only the response headers (--print h).")
    var headers = false

    @Flag(name: [.customShort("b"), .long], help: "Print only the response body (--print b).")
    var body = false

    @Option(help: ArgumentHelp(
        "Keep cookies, credentials and headers between runs in this session (a name, stored per host under "
            + "$XDG_CONFIG_HOME/courier/sessions/, or a path containing '/').", valueName: "name|path"))
    var session: String?

    @Option(name: .customLong("session-read-only"), help: ArgumentHelp("Use this session without updating it.", valueName: "name|path"))
    var sessionReadOnly: String?

    @Flag(name: .customLong("session-store-password"), help: "Also store in the session a password typed at the prompt.")
    var sessionStorePassword = false

    @Option(help: ArgumentHelp("A client certificate for mutual TLS (PEM or DER; may also hold the key).", valueName: "file"))
    var cert: String?

    @Option(name: .customLong("cert-key"), help: ArgumentHelp("The private key of --cert (PEM or DER, unencrypted).", valueName: "file"))
    var certKey: String?

    @Option(name: .customLong("default-scheme"), help: ArgumentHelp("The scheme of a URL given without one: http or https.", valueName: "scheme"))
    var defaultScheme: String?

    @Flag(help: "Short for --default-scheme https (what courier-https does).")
    var https = false

    @Flag(help: "Send the body with Transfer-Encoding: chunked.")
    var chunked = false

    @Flag(
        name: [.customShort("x"), .long],
        help: "Deflate the body (Content-Encoding: deflate) when that makes it smaller; -xx always.")
    var compress: Int

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
