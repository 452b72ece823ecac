import ArgumentParser
import Foundation

/// The `courier` command-line tool: Courier's test server, demo and HTTP client.
@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Courier: an HTTP networking library for Swift on Linux, and its tools.",
        discussion: RequestCommand.rootDiscussion,
        subcommands: [
            DemoCommand.self, ServeCommand.self, BenchCommand.self, ReachabilityCommand.self, WebSocketCommand.self, RequestCommand.self,
        ],
        defaultSubcommand: RequestCommand.self,
        // -h is --headers, as in HTTPie; help is --help.
        helpNames: [.long]
    )

    /// ArgumentParser's `main`, except that a usage error (an unknown option, a missing or
    /// invalid value: ArgumentParser's status 64) exits with 2, `courier`'s documented status
    /// for invalid items and options (HTTPie's, from Python's argparse).
    static func main() async {
        StandardStreams.ignoreBrokenPipes()
        do {
            var command = try await asyncParseAsRoot(try requestArguments())
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            StandardStreams.writeError(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(ExitStatus.timeoutOrUsage.rawValue)
        }
    }

    /// The command line with the config file's default options (and `--https` when run as
    /// `courier-https`) put before a request's typed arguments; see ``ConfigFile``.
    private static func requestArguments() throws -> [String] {
        let typed = Array(CommandLine.arguments.dropFirst())
        let invokedAs = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "courier"
        let others = Set(configuration.subcommands.map { $0._commandName }).subtracting(["request"])
        let defaults: [String]
        do {
            defaults = try ConfigFile.defaultOptions(in: ConfigFile.directory())
        } catch let error as RequestBuildError {
            let first = typed.first ?? ""
            guard !others.contains(first) else { return typed }
            throw ValidationError(error.description)
        }
        return ConfigFile.arguments(typed, defaults: defaults, https: invokedAs == "courier-https", otherSubcommands: others)
    }
}
