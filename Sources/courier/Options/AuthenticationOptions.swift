import ArgumentParser

/// HTTPie's "Authentication" options.
struct AuthenticationOptions: ParsableArguments {
    @Option(name: [.customShort("a"), .long], help: ArgumentHelp("Credentials.", valueName: "user:password"))
    var auth: String?

    @Option(name: [.customShort("A"), .customLong("auth-type")], help: "basic (sent up front) or digest (answers the challenge).")
    var authType: String = "basic"

    @Option(help: ArgumentHelp("Send 'Authorization: Bearer TOKEN'.", valueName: "token"))
    var bearer: String?
}
