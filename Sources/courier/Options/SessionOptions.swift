import ArgumentParser

/// HTTPie's "Sessions" options.
struct SessionOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Keep cookies, credentials and headers between runs in this session (a name, stored per host under "
            + "$XDG_CONFIG_HOME/courier/sessions/, or a path containing '/').", valueName: "name|path"))
    var session: String?

    @Option(name: .customLong("session-read-only"), help: ArgumentHelp("Use this session without updating it.", valueName: "name|path"))
    var sessionReadOnly: String?

    @Flag(name: .customLong("session-store-password"), help: "Also store in the session a password typed at the prompt.")
    var sessionStorePassword = false
}
