import ArgumentParser

/// The `courier` command-line tool: Courier's test server, demo and HTTP client.
@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Courier: an HTTP networking library for Swift on Linux, and its tools.",
        discussion: RequestCommand.rootDiscussion,
        subcommands: [DemoCommand.self, ServeCommand.self, BenchCommand.self, RequestCommand.self],
        defaultSubcommand: RequestCommand.self
    )
}
