import ArgumentParser

/// HTTPie's "Content types" and "Content processing" options: how data items become a body,
/// where a raw body comes from, and how it is sent.
struct ContentOptions: ParsableArguments {
    @Flag(name: [.customShort("j"), .long], help: "Send data fields as a JSON object (the default).")
    var json = false

    @Flag(name: [.customShort("f"), .long], help: "Send data fields as a URL-encoded form (multipart with files).")
    var form = false

    @Option(help: ArgumentHelp("Send this text as the body (as if piped to stdin).", valueName: "text"))
    var raw: String?

    @Flag(help: "Send a multipart/form-data body even without files.")
    var multipart = false

    @Flag(name: [.customShort("I"), .customLong("ignore-stdin")], help: "Never read the body from standard input.")
    var ignoreStdin = false

    @Flag(
        name: [.customShort("x"), .long],
        help: "Deflate the body (Content-Encoding: deflate) when that makes it smaller; -xx always. A form or an @file body is deflated as it is sent (chunked, bounded memory) when 1 KiB or more; -xx always.")
    var compress: Int

    @Flag(help: "Send the body with Transfer-Encoding: chunked.")
    var chunked = false

    /// The body's form, from `--json`, `--form` and `--multipart` (JSON when none is given).
    /// - Throws: ``RequestBuildError`` when more than one is given.
    func mode() throws -> BodyMode {
        if [json, form, multipart].filter({ $0 }).count > 1 {
            throw RequestBuildError(description: "choose one of --json, --form and --multipart")
        }
        return multipart ? .multipart : form ? .form : .json
    }
}
