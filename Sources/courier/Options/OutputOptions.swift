import ArgumentParser

/// HTTPie's "Output processing" and "Output options": what of the exchange is printed, and how.
struct OutputOptions: ParsableArguments {
    @Option(
        name: [.customShort("p"), .customLong("print")],
        help: ArgumentHelp("What to print: H request headers, B request body, h response headers, b response body.", valueName: "HBhb"))
    var printLetters: String?

    @Flag(name: [.customShort("h"), .long], help: "Print only the response headers (--print h).")
    var headers = false

    @Flag(name: [.customShort("b"), .long], help: "Print only the response body (--print b).")
    var body = false

    @Flag(name: [.customShort("v"), .long], help: "Print the whole exchange (HBhb) and its timings.")
    var verbose = false

    @Flag(help: "With --follow: print every redirect hop (request and response), not only the last.")
    var all = false

    @Option(help: ArgumentHelp("all, colors, format or none (default: all on a terminal, none when piped).", valueName: "style"))
    var pretty: String?

    @Flag(name: [.customShort("S"), .long], help: "Print the body chunk by chunk as it arrives (JSON lines formatted one by one).")
    var stream = false

    @Flag(
        help: "Server-sent events: when the stream ends or drops, reconnect after the server's retry: (3 s until it sends one; backing off while it fails) and resume with Last-Event-ID, each event printed once; ends on 204. Implies --stream.")
    var reconnect = false

    @Flag(help: "Build the request and print it (default --print HB); send nothing.")
    var offline = false

    @Flag(help: "Print the curl command that sends the same request; send nothing.")
    var curl = false

    @Option(
        name: [.customShort("w"), .customLong("write-out")],
        help: ArgumentHelp(
            "After the body, print FORMAT with curl's variables filled in: %{http_code}, %{time_namelookup}, %{time_connect}, %{time_appconnect}, %{time_starttransfer}, %{time_total}, %{size_download}, %{remote_ip}, %{remote_port}, %{http_version}, %{num_redirects}, %{url_effective}; \\n is a newline.",
            valueName: "format"))
    var writeOut: String?

    @Option(
        help: ArgumentHelp(
            "Write an HTTP Archive (HAR 1.2) of every exchange of the call to FILE: each redirect and retry an entry, with timings. Credentials are hidden.",
            valueName: "file"))
    var har: String?

    @Flag(help: "With --har: keep the values of credential headers and secret query parameters in the archive.")
    var harIncludeSecrets = false

    /// The `--write-out` format, read; nil without the option.
    /// - Throws: ``RequestBuildError`` naming an unknown variable.
    func writeOutFormat() throws -> WriteOutFormat? {
        guard let writeOut else { return nil }
        do {
            return try WriteOutFormat(writeOut)
        } catch {
            throw RequestBuildError(description: error.description)
        }
    }

    /// What to print for an exchange that is sent, from these options and whether stdout is a
    /// terminal (`hb` there, `b` when piped, as HTTPie).
    /// - Throws: ``RequestBuildError`` for conflicting or malformed options.
    func printOptions(isTerminal: Bool) throws -> PrintOptions {
        var options = PrintOptions(isTerminal: isTerminal)
        if headers && body {
            throw RequestBuildError(description: "choose one of -h/--headers and -b/--body")
        }
        if headers || body {
            try options.setPrint(headers ? "h" : "b")
        } else if verbose {
            try options.setPrint("HBhb")
        } else if let printLetters {
            try options.setPrint(printLetters)
        } else {
            try options.setPrint(isTerminal ? "hb" : "b")
        }
        switch pretty ?? (isTerminal ? "all" : "none") {
        case "all": (options.colors, options.format) = (true, true)
        case "colors": (options.colors, options.format) = (true, false)
        case "format": (options.colors, options.format) = (false, true)
        case "none": (options.colors, options.format) = (false, false)
        case let other:
            throw RequestBuildError(description: "--pretty takes all, colors, format or none; got '\(other)'")
        }
        return options
    }

    /// `--offline`: the request's head and body unless --print (or -v, -h, -b) says otherwise.
    func offlinePrintOptions(isTerminal: Bool) throws -> PrintOptions {
        var options = try printOptions(isTerminal: isTerminal)
        if printLetters == nil && !verbose && !headers && !body { try options.setPrint("HB") }
        return options
    }

    /// Whether the response head is printed for a download (`-v`, or `--print` with `h`; on by default).
    var printsDownloadHead: Bool { verbose || printLetters.map { $0.contains("h") } ?? true }
}
