import ArgumentParser
import Foundation

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

    /// ArgumentParser's `main`, except that a usage error (an unknown option, a missing or
    /// invalid value: ArgumentParser's status 64) exits with 2, `courier`'s documented status
    /// for invalid items and options (HTTPie's, from Python's argparse).
    static func main() async {
        do {
            var command = try await asyncParseAsRoot(nil)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(ExitStatus.timeoutOrUsage.rawValue)
        }
    }
}
