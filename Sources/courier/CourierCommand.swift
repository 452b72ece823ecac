import ArgumentParser

/// The `courier` command-line tool: Courier's test server, demo and HTTP client.
@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Courier: an HTTP networking library for Swift on Linux, and its tools.",
        subcommands: [DemoCommand.self, ServeCommand.self]
    )
}
